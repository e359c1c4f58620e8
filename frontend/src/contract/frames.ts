// Generated from reducers/frames.py by `make contract` (manage.py contract --write).
// Edit the schemas, not this file; tests/unit/test_contract.py fails when it is not current.

/** Follow a subscriber channel (resume after ``last_seq`` when given). */
export interface AttachMessage {
  type: "attach";
  channel: string;
  last_seq?: number | null;
}

/** A channel is followed (``query``: the query of a shared channel followed by its query). */
export interface AttachedFrame {
  type: "attached";
  channel: string;
  query?: Record<string, unknown>;
}

export interface BetCashOut {
  bet_id: number;
  cash_out: string | null;
  error?: ErrorBody;
}

/** A bet held by the in-play delay was decided (the punter's own news). */
export interface BetDecidedFrame {
  type: "bet.decided";
  bet: BetDecision;
}

export interface BetDecision {
  id: number;
  status: "accepted" | "rejected";
  reject: ErrorBody | null;
}

/**
 * Legs of a bet of the punter were decided while the bet stays open (an accumulator with a
 * leg won or void): the punter's own news, so a bets view counts those legs as decided.
 */
export interface BetLegsFrame {
  type: "bet.legs";
  v: number;
  bet: LegsDecidedBet;
}

/**
 * A trader's counter-offer: ``stake``, the single's new ``price`` (null: the prices taken)
 * and what it returns, decimal strings in the wallet's currency; ``until`` when it runs out
 * (epoch ms, the server's clock) and ``seconds`` how long that was when it was sent (a client
 * counts down from when the frame arrived).
 */
export interface BetOffer {
  id: number;
  stake: string;
  price: string | null;
  potential_return: string;
  until: number;
  seconds: number;
}

/**
 * A trader offers the punter another stake or price on their referred bet (the punter's own
 * news; docs/referral.md).
 */
export interface BetOfferedFrame {
  type: "bet.offered";
  bet: BetOffer;
}

/** A bet of the punter closed, with the balance it left (the punter's own news). */
export interface BetSettledFrame {
  type: "bet.settled";
  v: number;
  bet: SettledBet;
  wallet: Wallet;
}

/** A match clock (``reducers.schemas.MatchClock``). */
export interface ClockState {
  running: boolean;
  elapsed_s: number;
  at: number;
  direction: string;
  limit_s: number | null;
  rate: number;
}

export interface ConflatedFrame {
  type: "conflated";
  merged: number;
}

export interface DecidedLeg {
  selection_id: number;
  result: "won" | "lost" | "void";
}

/**
 * ``desk.bet``: one bet event the liability reducer counted (the ticker). ``id`` is the bet
 * event's id (unique per bet and change); ``kind`` what happened to the bet: ``placed``,
 * ``voided``, ``cashed_out`` or ``settled``, or ``pending`` (held by the in-play delay until
 * ``until``, epoch ms) or ``rejected`` (refused, ``reason`` in the punter's words), which change
 * no book; amounts are decimal strings, ``stake`` and
 * ``potential_return`` in the bet's ``currency`` (its wallet's), ``book_stake`` and
 * ``book_potential_return`` in the book's currency at the operator's rates when it was counted;
 * ``ts`` when the bet event happened and ``reducer_ts`` when the reducer counted it (epoch ms).
 */
export interface DeskBetFrame {
  type: "desk.bet";
  v: number;
  id: string;
  bet_id: number;
  kind: string;
  user_id: number;
  currency: string;
  stake: string;
  potential_return: string;
  book_stake: string;
  book_potential_return: string;
  legs: DeskBetLeg[];
  reason: string;
  until: number | null;
  ts: number;
  reducer_ts: number;
}

/** One leg of a ticker bet, named from the markets table (empty names for a market it does not know). */
export interface DeskBetLeg {
  market_id: number;
  selection_id: number;
  event_id: number;
  price: string;
  sport: string;
  event: string;
  market: string;
  selection: string;
  in_play: boolean;
}

/** ``desk.followed``: the staff socket follows the desk's channels from now on. */
export interface DeskFollowedFrame {
  type: "desk.followed";
  v: number;
  channels: string[];
}

/**
 * ``desk.liability``: the markets whose books one batch of bet events moved (or, after the
 * operator changed a rate, every market with open bets); a market with no open bet left has
 * ``bets`` 0 and leaves the risk view. ``currency`` is the book's, which every figure is in.
 */
export interface DeskLiabilityFrame {
  type: "desk.liability";
  v: number;
  currency: string;
  markets: DeskMarketBook[];
  ts: number;
}

/**
 * One market's book in integer pence of the book's currency, every wallet's amounts converted
 * at the operator's current rates: ``staked`` by the open bets with a leg in it (``bets``),
 * the P/L on each outcome, the worst of them (``worst``, on ``worst_selection``; null when no
 * selection carries a return) and its event's worst case (``event_worst``).
 */
export interface DeskMarketBook {
  market_id: number;
  event_id: number;
  sport: string;
  event: string;
  market: string;
  in_play: boolean;
  staked: number;
  bets: number;
  outcomes: DeskOutcome[];
  worst: number;
  worst_selection: number | null;
  event_worst: number;
}

/**
 * Follow the trading desk's staff channels (``desk.bet`` and ``desk.liability`` frames);
 * refused with ``staff_only`` on a socket whose user is not staff, and with
 * ``second_factor_required`` on a staff session that has not used its second factor.
 */
export interface DeskMessage {
  type: "desk";
}

/**
 * ``desk.movers``: the event-time windows (starts, epoch ms) whose price movers one batch of
 * the movers query ranked again; the traders' movers page reads them afresh.
 */
export interface DeskMoversFrame {
  type: "desk.movers";
  v: number;
  windows: number[];
  ts: number;
}

/** The book's profit (positive) or loss (negative) in pence if this selection wins. */
export interface DeskOutcome {
  selection_id: number;
  name: string;
  pl: number;
}

/** A subscriber channel ended; published by the reducers as they remove it. */
export interface EndedFrame {
  type: "ended";
  channel: string;
  reason: string;
}

export interface ErrorBody {
  code: string;
  message: string;
}

export interface ErrorFrame {
  type: "error";
  code: string;
  message: string;
}

export interface GameAnswerState {
  event_id: number;
  choice: string;
  result: string;
  points: number;
}

/** One line of a leaderboard's top. */
export interface GameLeader {
  rank: number;
  name: string;
  points: number;
}

/**
 * What happened to one of the punter's answers: ``accepted``, ``refused`` (``reason``) or
 * ``settled`` (``result``, ``points``).
 */
export interface GameNews {
  kind: "accepted" | "refused" | "settled";
  question_id: number;
  event_id: number;
  choice: string;
  answer_id: string;
  result?: string;
  points?: number;
  reason?: string;
}

/**
 * A punter's game state (``reducers.game.state_doc``): points per day and per event, the
 * streak of correct answers, the answers by question id (their results once decided).
 */
export interface GamePunter {
  version: number;
  streak: number;
  best_streak: number;
  answered: number;
  correct: number;
  days: Record<string, number>;
  matches: Record<string, number>;
  answers: Record<string, GameAnswerState>;
}

/** A question of an event's game (``reducers.game.question_frame``). */
export interface GameQuestion {
  id: number;
  event_id: number;
  kind: string;
  title: string;
  options: string[];
  points: Record<string, number>;
  status: "open" | "closed" | "settled" | "void";
  day: string;
  opened_at: number;
  until_minute: number | null;
  close_minute: number | null;
  closed_at: number | null;
  outcome: string | null;
  void_reason: string | null;
}

/** ``game.questions``: questions of the event opened, closed, settled or voided. */
export interface GameQuestionsFrame {
  type: "game.questions";
  v: number;
  event_id: number;
  questions: GameQuestion[];
  batch: number;
}

/**
 * The punter's place on the event's leaderboard and on the day's (1 is first; ``None``
 * before the punter is on it), out of how many players.
 */
export interface GameRank {
  match: number | null;
  day: number | null;
  players: number;
  day_players: number;
}

/**
 * ``game.state``: an event's game as a page starts following it (``watch`` with ``games``):
 * every question and the leaderboard's top. ``batch`` orders it with the game's later frames.
 */
export interface GameStateFrame {
  type: "game.state";
  v: number;
  event_id: number;
  questions: GameQuestion[];
  top: GameLeader[];
  players: number;
  batch: number;
}

/** ``game.top``: the event's leaderboard's top moved. */
export interface GameTopFrame {
  type: "game.top";
  v: number;
  event_id: number;
  top: GameLeader[];
  players: number;
  batch: number;
}

/** ``game.image`` / ``game.delta``: a punter's game channel. */
export interface GameViewFrame {
  type: "game.image" | "game.delta";
  v: number;
  channel: string;
  event_id: number;
  me?: GamePunter | null;
  news?: GameNews[];
  rank?: GameRank;
  questions?: GameQuestion[];
  top?: GameLeader[];
  resync?: boolean;
  seq: number;
}

export interface HeartbeatFrame {
  type: "heartbeat";
  ts: number;
}

export interface HelloFrame {
  type: "hello";
  v: number;
  user: string | null;
}

export interface ImageFrame {
  type: "image";
  v: number;
  markets: MarketFrame[];
}

/** An incident of the match (``reducers.schemas.Incident``). */
export interface IncidentState {
  kind: string;
  side: string;
  period: number;
  at: number;
}

export interface LegsDecidedBet {
  id: number;
  legs: DecidedLeg[];
}

/**
 * ``market``: one market's state, as the price reducer stores and publishes it. ``merged``
 * and ``ts`` are absent from a trader's decision kept for bets (``sb:trader:<market>``).
 */
export interface MarketFrame {
  type: "market";
  v: number;
  market_id: number;
  seq: number;
  status: string;
  tradable: boolean;
  selections: SelectionState[];
  merged?: number;
  ts?: Timestamps;
}

/** ``market.status``: a market's status changed; sent just before its state, never conflated. */
export interface MarketStatusFrame {
  type: "market.status";
  v: number;
  market_id: number;
  seq: number;
  status: string;
  tradable: boolean;
  ts: Timestamps;
}

/** Several market frames in one websocket frame (clients that asked for ``batch``). */
export interface MarketsFrame {
  type: "markets";
  items: MarketFrame[];
}

/** ``view.match``: new match states of the channel's events. */
export interface MatchFrame {
  type: "view.match";
  v: number;
  channel: string;
  matches: MatchMessage[];
  seq: number;
}

/** ``match``: an event's match state, in a channel frame's ``matches``. */
export interface MatchMessage {
  type: "match";
  v: number;
  event_id: number;
  seq: number;
  sport: string;
  status: string;
  period: number;
  score: Record<string, unknown>;
  clock: ClockState | null;
  incidents: IncidentState[];
  ts: Timestamps;
  suspension?: SuspensionState | null;
}

/**
 * The stored match states of the events a socket started following (``watch`` with
 * ``events``); each later state comes as its own ``match`` message.
 */
export interface MatchesFrame {
  type: "matches";
  v: number;
  items: MatchMessage[];
}

export interface PingMessage {
  type: "ping";
}

export interface PongFrame {
  type: "pong";
  ts: number;
}

/**
 * ``view.query``: a shared query channel's markets: all of them (``image``), or those that
 * joined, left, or changed in what an event list shows.
 */
export interface QueryFrame {
  type: "view.query";
  v: number;
  channel: string;
  image?: boolean;
  markets?: number[];
  added?: number[];
  removed?: number[];
  changed?: number[];
  seq: number;
}

/**
 * Follow a query's shared channel (``view.query`` frames: which markets it holds), created
 * for the query if there is none; resume after ``last_seq`` when given.
 */
export interface QueryMessage {
  type: "query";
  query: Record<string, unknown>;
  last_seq?: number | null;
}

export interface ResumedFrame {
  type: "resumed";
  channel: string;
  after: number;
  count: number;
  resync: boolean;
}

export interface SelectionState {
  id: number;
  price: string;
  status: string;
}

/**
 * The last frame of a socket whose session ended (logout, a password change, the account
 * deactivated or self-excluded); the server then closes it (``CLOSE_SESSION_ENDED``).
 */
export interface SessionEndedFrame {
  type: "session.ended";
  v: number;
  reason: "logged_out" | "password_changed" | "deactivated" | "self_excluded";
}

export interface SettledBet {
  id: number;
  status: "won" | "lost" | "void" | "cashed_out";
  title: string;
  stake: string;
  payout: string;
}

export interface SlipLegSummary {
  selection_id: number;
  market_id: number;
  price: string | null;
  suspended: boolean;
}

export interface SlipSummary {
  legs: SlipLegSummary[];
  placeable: boolean;
  combined_odds?: string;
  potential_return?: string;
  error?: ErrorBody;
}

/** Why an event's markets are suspended (``reducers.schemas.MatchSuspension``). */
export interface SuspensionState {
  reason: string;
  since: number;
}

/** When a state happened at the source, was produced, reached Kafka and was applied. */
export interface Timestamps {
  event: number;
  produce: number;
  kafka: number;
  reducer: number;
}

export interface UnwatchMessage {
  type: "unwatch";
  markets: number[];
  events?: number[];
  games?: number[];
}

/** ``view.image`` (every market of the channel) or ``view.delta`` (the markets that changed). */
export interface ViewFrame {
  type: "view.image" | "view.delta";
  v: number;
  channel: string;
  markets: MarketFrame[];
  resync?: boolean;
  since?: boolean;
  matches?: MatchMessage[];
  slip?: SlipSummary;
  bets?: BetCashOut[];
  error?: ErrorBody;
  seq: number;
}

export interface Wallet {
  currency: string;
  balance: string;
}

/**
 * Start streaming markets (an ``image``, then ``market`` frames); ``batch``: one tick's
 * frames together; ``since``: market id → [seq, status] the client holds already; ``events``:
 * events whose match states to follow (a ``matches`` frame, then ``match`` messages);
 * ``games``: events whose predictor games to follow (a ``game.state`` frame each, then
 * ``game.questions`` and ``game.top``).
 */
export interface WatchMessage {
  type: "watch";
  markets: number[];
  batch?: boolean;
  since?: Record<string, [number, string]>;
  events?: number[];
  games?: number[];
}

export type ServerFrame =
  | SessionEndedFrame
  | HelloFrame
  | ImageFrame
  | MarketFrame
  | MarketsFrame
  | MarketStatusFrame
  | ConflatedFrame
  | PongFrame
  | HeartbeatFrame
  | ErrorFrame
  | AttachedFrame
  | ResumedFrame
  | EndedFrame
  | BetDecidedFrame
  | BetOfferedFrame
  | BetSettledFrame
  | BetLegsFrame
  | ViewFrame
  | MatchFrame
  | QueryFrame
  | MatchMessage
  | MatchesFrame
  | GameStateFrame
  | GameQuestionsFrame
  | GameTopFrame
  | GameViewFrame
  | DeskBetFrame
  | DeskLiabilityFrame
  | DeskMoversFrame
  | DeskFollowedFrame;

export type ClientMessage =
  | WatchMessage
  | UnwatchMessage
  | AttachMessage
  | QueryMessage
  | PingMessage
  | DeskMessage;
