// The predictor game on an event page (docs/protocol.md, "The predictor game"): free to play, no
// money moves. Everyone sees the questions and the leaderboard's top over the page's websocket
// (the event's public game frames); a logged-in punter answers, and their own game channel
// (`"view": "game"`) brings what became of each answer, their points, streak and ranks.
import { ApiError, apiRequest } from "./api";
import { h, readJSON, setText, storage, writeJSON } from "./dom";
import type { ChannelCreated } from "./contract/api";
import { showNotice } from "./notices";
import type { ChannelListener } from "./protocol";
import type {
  GameAnswerState,
  GameLeader,
  GameNews,
  GamePunter,
  GameQuestion,
  GameQuestionsFrame,
  GameRank,
  GameStateFrame,
  GameTopFrame,
  GameViewFrame,
} from "./contract/frames";

export type {
  GameAnswerState,
  GameLeader,
  GameNews,
  GamePunter,
  GameQuestion,
  GameQuestionsFrame,
  GameRank,
  GameStateFrame,
  GameTopFrame,
  GameViewFrame,
} from "./contract/frames";

export type GamePublicFrame = GameStateFrame | GameQuestionsFrame | GameTopFrame;

const STAGE: Record<GameQuestion["status"], number> = { open: 0, closed: 1, settled: 2, void: 2 };

export const REFUSALS: Record<string, string> = {
  question_closed: "Too late: the question had closed.",
  question_void: "The question was voided.",
  already_answered: "You had answered this question.",
  unknown_question: "That question is not in this game.",
  bad_choice: "That is not one of the question's answers.",
};

/** The page's copy of one event's game: questions move forward only (open, closed, then
 * settled or void), the top by its batch, the punter's state by its version. */
export class GameModel {
  readonly questions = new Map<number, GameQuestion>();
  top: GameLeader[] = [];
  players = 0;
  me: GamePunter | null = null;
  rank: GameRank | null = null;
  /** Answers sent and not yet decided by the game (question id → choice). */
  readonly pending = new Map<number, string>();
  private topBatch = -1;

  constructor(readonly eventId: number) {}

  question(next: GameQuestion): void {
    const current = this.questions.get(next.id);
    if (current !== undefined && STAGE[current.status] > STAGE[next.status]) return;
    this.questions.set(next.id, next);
  }

  publicFrame(frame: GamePublicFrame): boolean {
    if (frame.event_id !== this.eventId) return false;
    if (frame.type !== "game.top") for (const q of frame.questions) this.question(q);
    if (frame.type !== "game.questions" && frame.batch >= this.topBatch) {
      this.topBatch = frame.batch;
      this.top = frame.top;
      this.players = frame.players;
    }
    return true;
  }

  /** A frame of the punter's channel; returns the news it brought. */
  view(frame: GameViewFrame): GameNews[] {
    if (frame.event_id !== this.eventId) return [];
    for (const q of frame.questions ?? []) this.question(q);
    if (frame.top !== undefined) this.top = frame.top;
    if (frame.me !== undefined && (frame.me === null || this.me === null || frame.me.version >= this.me.version)) {
      this.me = frame.me;
    }
    if (frame.rank !== undefined) this.rank = frame.rank;
    const news = frame.news ?? [];
    for (const item of news) this.pending.delete(item.question_id);
    for (const id of Object.keys(this.me?.answers ?? {})) this.pending.delete(Number(id));
    return news;
  }

  answerOf(questionId: number): { choice: string; result: string; points: number } | null {
    const held = this.me?.answers[String(questionId)];
    if (held !== undefined) return held;
    const sent = this.pending.get(questionId);
    return sent === undefined ? null : { choice: sent, result: "sending", points: 0 };
  }

  /** Open questions first (the newest first), then the decided ones, newest first. */
  ordered(): GameQuestion[] {
    return [...this.questions.values()].sort((a, b) => STAGE[a.status] - STAGE[b.status] || b.id - a.id);
  }

  points(): number {
    return this.me?.matches[String(this.eventId)] ?? 0;
  }
}

/** The words of an option: the teams' names for home and away. */
export function optionLabel(option: string, teams: { home: string; away: string }, kind: string): string {
  switch (option) {
    case "home":
      return teams.home;
    case "away":
      return teams.away;
    case "none":
      return kind === "next_goal" ? "No goal" : "None";
    case "draw":
      return "Draw";
    case "yes":
      return "Yes";
    case "no":
      return "No";
    default:
      return option;
  }
}

export function statusText(q: GameQuestion, teams: { home: string; away: string }): string {
  switch (q.status) {
    case "open":
      return q.close_minute !== null ? `Open · closes at ${q.close_minute}'` : "Open";
    case "closed":
      return "Closed · waiting for the result";
    case "settled":
      return `Result: ${optionLabel(q.outcome ?? "", teams, q.kind)}`;
    case "void":
      return `Void${q.void_reason ? `: ${q.void_reason}` : ""}`;
  }
}

export function newsText(news: GameNews, question: GameQuestion | undefined, teams: { home: string; away: string }): string {
  const about = question?.title ?? "your answer";
  if (news.kind === "refused") return `${REFUSALS[news.reason ?? ""] ?? "Your answer was refused."} (${about})`;
  if (news.kind === "accepted") return `Answer in: ${optionLabel(news.choice, teams, question?.kind ?? "")} — ${about}`;
  if (news.result === "won") return `Correct! +${news.points ?? 0} points — ${about}`;
  if (news.result === "void") return `Void, no points — ${about}`;
  return `Not this time — ${about}`;
}

/** The events whose games the page shows. */
export function pageGames(): number[] {
  return [...document.querySelectorAll<HTMLElement>("[data-game-event]")].map((n) => Number(n.dataset.gameEvent));
}

/** What the widget needs of the websocket client. */
export interface GameHost {
  attach(channelId: string, listener: ChannelListener, options?: { begun?: boolean }): void;
  forget(channelId: string): void;
  followGames(events: Iterable<number>): void;
}

const RETRY_MS = 3000;

export class GameWidget {
  readonly model: GameModel;
  private readonly teams: { home: string; away: string };
  private channelId: string | null = null;
  private readonly storageKey: string;

  constructor(
    private readonly root: HTMLElement,
    private readonly client: GameHost,
    private readonly loggedIn: boolean,
  ) {
    this.model = new GameModel(Number(root.dataset.gameEvent));
    this.teams = { home: root.dataset.home ?? "Home", away: root.dataset.away ?? "Away" };
    this.storageKey = `game-channel-${this.model.eventId}`;
  }

  static mount(client: GameHost, loggedIn: boolean): GameWidget | null {
    const root = document.querySelector<HTMLElement>("[data-game-event]");
    return root === null ? null : new GameWidget(root, client, loggedIn);
  }

  start(): void {
    this.client.followGames([this.model.eventId]);
    if (this.loggedIn) this.subscribe();
    this.render();
  }

  publicFrame(frame: GamePublicFrame): void {
    if (this.model.publicFrame(frame)) this.render();
  }

  private listener(): ChannelListener {
    return {
      onFrame: () => undefined,
      onGame: (frame) => {
        const news = this.model.view(frame);
        if (frame.type === "game.delta") {
          for (const item of news) {
            const kind = item.kind === "settled" ? (item.result ?? "settled") : item.kind;
            showNotice(newsText(item, this.model.questions.get(item.question_id), this.teams), `game-${kind}`);
          }
        }
        this.render();
      },
      onLost: () => {
        this.channelId = null;
        writeJSON(storage("session"), this.storageKey, null);
        window.setTimeout(() => this.subscribe(), 0);
      },
    };
  }

  private subscribe(): void {
    const saved = readJSON(storage("session"), this.storageKey);
    if (typeof saved === "string") {
      this.channelId = saved;
      this.client.attach(saved, this.listener(), { begun: true });
      return;
    }
    apiRequest<ChannelCreated>("POST", "/api/streams", { view: "game", event: this.model.eventId })
      .then((created) => {
        this.channelId = created.channel;
        writeJSON(storage("session"), this.storageKey, created.channel);
        this.client.attach(created.channel, this.listener());
      })
      .catch(() => window.setTimeout(() => this.subscribe(), RETRY_MS));
  }

  async answer(question: GameQuestion, choice: string): Promise<void> {
    this.model.pending.set(question.id, choice);
    this.render();
    try {
      await apiRequest("POST", "/api/game/answers", {
        event_id: this.model.eventId,
        question_id: question.id,
        choice,
      });
    } catch (error) {
      this.model.pending.delete(question.id);
      const code = error instanceof ApiError ? error.code : "";
      const message = REFUSALS[code] ?? (error instanceof Error ? error.message : "The answer was not sent.");
      showNotice(`${message} (${question.title})`, "game-refused");
      this.render();
    }
  }

  render(): void {
    this.renderMe();
    this.renderQuestions();
    this.renderTop();
  }

  private renderMe(): void {
    const box = this.root.querySelector<HTMLElement>("[data-game-me]");
    if (box === null) return;
    box.hidden = !this.loggedIn;
    const me = this.model.me;
    const rank = this.model.rank;
    setText(box.querySelector("[data-game-points]"), String(this.model.points()));
    setText(box.querySelector("[data-game-streak]"), String(me?.streak ?? 0));
    setText(
      box.querySelector("[data-game-rank]"),
      rank?.match ? `#${rank.match} of ${rank.players}` : "—",
    );
    const today = me === null ? 0 : Object.entries(me.days).sort(([a], [b]) => (a < b ? 1 : -1))[0]?.[1] ?? 0;
    setText(box.querySelector("[data-game-day]"), rank?.day ? `${today} pts · #${rank.day} today` : `${today} pts`);
  }

  private renderQuestions(): void {
    const list = this.root.querySelector<HTMLElement>("[data-game-questions]");
    if (list === null) return;
    const questions = this.model.ordered();
    if (questions.length === 0) {
      list.replaceChildren(h("li", { class: "game-empty", text: "Questions open as the match is played." }));
      return;
    }
    list.replaceChildren(...questions.map((q) => this.questionNode(q)));
  }

  private questionNode(q: GameQuestion): HTMLElement {
    const mine = this.model.answerOf(q.id);
    const open = q.status === "open";
    const options = q.options.map((option) => {
      const chosen = mine?.choice === option;
      const button = h(
        "button",
        {
          type: "button",
          class: `game-option${chosen ? " chosen" : ""}${q.outcome === option ? " outcome" : ""}`,
          "data-choice": option,
          "aria-pressed": chosen ? "true" : "false",
          disabled: !open || !this.loggedIn || mine !== null,
        },
        h("span", { class: "game-option-label", text: optionLabel(option, this.teams, q.kind) }),
        h("span", { class: "game-option-points num", text: `${q.points[option] ?? 0} pts` }),
      );
      button.addEventListener("click", () => void this.answer(q, option));
      return button;
    });
    const result = mine === null ? null : h("p", { class: "game-mine", "data-result": mine.result, text: mineText(mine, this.teams, q.kind) });
    return h(
      "li",
      { class: "game-question", "data-question": q.id, "data-status": q.status },
      h(
        "div",
        { class: "game-question-head" },
        h("h3", { class: "game-question-title", text: q.title }),
        h("span", { class: "game-question-status", text: statusText(q, this.teams) }),
      ),
      h("div", { class: `game-options cols-${q.options.length}` }, ...options),
      result,
    );
  }

  private renderTop(): void {
    const list = this.root.querySelector<HTMLElement>("[data-game-top]");
    if (list === null) return;
    const players = this.root.querySelector("[data-game-players]");
    setText(players, this.model.players === 1 ? "1 player" : `${this.model.players} players`);
    if (this.model.top.length === 0) {
      list.replaceChildren(h("li", { class: "game-empty", text: "No one has scored yet." }));
      return;
    }
    const you = document.body.dataset.user ?? "";
    list.replaceChildren(
      ...this.model.top.map((leader) =>
        h(
          "li",
          { class: `game-leader${leader.name === you ? " you" : ""}` },
          h("span", { class: "game-leader-rank num", text: String(leader.rank) }),
          h("span", { class: "game-leader-name", text: leader.name }),
          h("span", { class: "game-leader-points num", text: String(leader.points) }),
        ),
      ),
    );
  }
}

function mineText(mine: { choice: string; result: string; points: number }, teams: { home: string; away: string }, kind: string): string {
  const choice = optionLabel(mine.choice, teams, kind);
  switch (mine.result) {
    case "sending":
      return `Sending: ${choice}…`;
    case "pending":
      return `Your answer: ${choice}`;
    case "won":
      return `Your answer: ${choice} · correct, +${mine.points}`;
    case "lost":
      return `Your answer: ${choice} · not this time`;
    default:
      return `Your answer: ${choice} · void`;
  }
}

/** The leaderboard page: its table read again every few seconds. */
export function startLeaderboardPage(): void {
  const table = document.querySelector<HTMLElement>("[data-leaderboard]");
  if (table === null) return;
  const refresh = async () => {
    try {
      const board = await apiRequest<{ top: GameLeader[]; players: number; me: { rank: number | null; points: number | null } | null }>(
        "GET",
        `/api/game/leaderboard${window.location.search}`,
      );
      const you = document.body.dataset.user ?? "";
      const body = table.querySelector("tbody");
      body?.replaceChildren(
        ...board.top.map((leader) =>
          h(
            "tr",
            { class: leader.name === you ? "you" : null },
            h("td", { class: "num", text: String(leader.rank) }),
            h("td", { text: leader.name }),
            h("td", { class: "num", text: String(leader.points) }),
          ),
        ),
      );
      setText(document.querySelector("[data-leaderboard-players]"), String(board.players));
      if (board.me !== null) {
        setText(
          document.querySelector("[data-leaderboard-me]"),
          board.me.rank === null ? "You have not played yet." : `You are #${board.me.rank} with ${board.me.points ?? 0} points.`,
        );
      }
    } catch {
      // The next refresh tries again.
    }
  };
  window.setInterval(() => void refresh(), 5000);
}
