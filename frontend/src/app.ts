// Page wiring: one websocket per page for the prices on it and the punter's channels, the odds
// format switch, the bet slip, my bets, the wallet balance and live scores.
import { api } from "./api";
import { setPageCurrency } from "./decimal";
import { GameWidget, pageGames, startLeaderboardPage } from "./game";
import { storage } from "./dom";
import { LiveList, listMarkets } from "./liveList";
import { MyBetsPage } from "./mybets";
import { isOddsFormat, type OddsFormat, storedOddsFormat, storeOddsFormat } from "./odds";
import { formatPage, pageMarkets, renderMarket } from "./prices";
import { type ConnectionStatus, OddsClient } from "./protocol";
import { settledText, showNotice } from "./notices";
import { matchState, pageEvents, scoresStreamDown, startScores } from "./scores";
import { SlipView } from "./slipView";
import { localTimes } from "./times";
import { betsChanged, moneyMoved, WalletBadge } from "./wallet";
import { startRealityCheck } from "./realityCheck";
import { startWalletPage } from "./walletPage";

const STATUS_TEXT: Record<ConnectionStatus, string> = {
  connecting: "Connecting…",
  live: "Live",
  reconnecting: "Reconnecting…",
  offline: "Offline",
};

interface Sportsbook {
  client: OddsClient;
  slip: SlipView;
  bets: MyBetsPage | null;
  format: () => OddsFormat;
}

declare global {
  interface Window {
    oddsClient?: OddsClient;
    sportsbook?: Sportsbook;
  }
}

function connectionIndicator(status: ConnectionStatus): void {
  const node = document.getElementById("conn-status");
  if (node === null) return;
  node.dataset.state = status;
  node.textContent = STATUS_TEXT[status];
}

/** Whether the price stream is down: closed, or not yet back after having been live. */
function streamDown(status: ConnectionStatus, wasLive: boolean): boolean {
  return status === "offline" || status === "reconnecting" || (status === "connecting" && wasLive);
}

/** Prices on a page whose stream is down are stale: greyed, with a note, and nothing placed. */
function showStream(down: boolean): void {
  document.body.dataset.stream = down ? "down" : "live";
  const note = document.getElementById("stream-paused");
  if (note !== null) note.hidden = !down;
}

function loginHelpers(): void {
  for (const button of document.querySelectorAll<HTMLButtonElement>("[data-demo-user]")) {
    button.addEventListener("click", () => {
      const username = document.getElementById("id_username") as HTMLInputElement | null;
      const password = document.getElementById("id_password") as HTMLInputElement | null;
      if (username === null || password === null) return;
      username.value = button.dataset.demoUser ?? "";
      password.value = "sportsbook-demo";
      password.focus();
    });
  }
}

function sidebarToggle(): void {
  const toggle = document.querySelector<HTMLButtonElement>(".nav-toggle");
  toggle?.addEventListener("click", () => {
    const open = document.body.classList.toggle("nav-open");
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  });
}

/** The sequence and status of each market the page was built with (odds.streaming.selectors.snapshots). */
function heldMarkets(): Record<string, [number, string]> {
  const node = document.getElementById("held-markets");
  if (node === null) return {};
  try {
    return JSON.parse(node.textContent ?? "{}") as Record<string, [number, string]>;
  } catch {
    return {};
  }
}

function boot(): void {
  const body = document.body.dataset;
  // Amounts in the punter's wallet currency (the page names it; the book's own before login).
  if (body.currency) setPageCurrency(body.currency);
  let fmt = storedOddsFormat(storage("local"));
  const format = () => fmt;
  const user = body.user ?? "";
  const scheme = window.location.protocol === "https:" ? "wss" : "ws";

  let slip: SlipView | null = null;
  let game: GameWidget | null = null;
  let wasLive = false;
  const client = new OddsClient({
    url: `${scheme}://${window.location.host}${body.wsPath ?? "/ws/odds/"}`,
    markets: pageMarkets(),
    events: pageEvents(),
    games: pageGames(),
    held: heldMarkets(),
    onMarket: (state) => {
      renderMarket(state, fmt);
      slip?.market(state);
      const latency = client.stats.latencyMs;
      const indicator = document.getElementById("conn-status");
      if (indicator !== null && latency !== null) {
        indicator.title = `Latest price reached this page ${Math.max(0, latency)} ms after the reducer applied it`;
      }
    },
    onStatus: (status) => {
      connectionIndicator(status);
      wasLive ||= status === "live";
      const down = streamDown(status, wasLive);
      showStream(down);
      scoresStreamDown(down);
      slip?.streamState(down);
    },
    onMatch: matchState,
    onGame: (frame) => game?.publicFrame(frame),
    onOffer: (offer) => {
      slip?.offered(offer);
      // My bets shows the offer with its answers.
      betsChanged();
    },
    onBet: (decision) => {
      slip?.decided(decision);
      // My bets and the balance follow (a rejected held bet's stake is back).
      moneyMoved();
    },
    onSettled: (message) => {
      showNotice(settledText(message), message.bet.status);
      // My bets and the balance follow at once.
      moneyMoved();
    },
    onLegs: () => betsChanged(),
    // Logged out in another tab, a password changed, the account closed: the page shows who is
    // logged in now (the socket closes and connects again as that visitor).
    onSessionEnded: () => window.location.reload(),
    control: { begin: async (channel, resync, since) => void (await api.begin(channel, resync, since)) },
  });
  slip = new SlipView({ client, user, loginUrl: body.loginUrl ?? "/login/", format });

  const switcher = document.getElementById("odds-format") as HTMLSelectElement | null;
  if (switcher !== null) {
    switcher.value = fmt;
    switcher.addEventListener("change", () => {
      if (!isOddsFormat(switcher.value)) return;
      fmt = switcher.value;
      storeOddsFormat(storage("local"), fmt);
      formatPage(fmt);
      localTimes();
      slip?.reformat();
      bets?.render();
    });
  }
  formatPage(fmt);
  localTimes();

  const bets = body.page === "my-bets" && user !== "" ? new MyBetsPage(client, format) : null;
  slip.start();
  bets?.start();
  new WalletBadge().start();
  if (body.page === "wallet") startWalletPage();
  if (user !== "") startRealityCheck();
  startScores();
  game = GameWidget.mount(client, user !== "");
  game?.start();
  if (body.page === "leaderboard") startLeaderboardPage();
  const listing = document.getElementById("listing");
  if (listing !== null) {
    new LiveList(listing, {
      client,
      rendered: (root) => {
        for (const market of listMarkets(root)) {
          const state = client.book.get(market);
          if (state !== undefined) renderMarket(state, fmt);
        }
        formatPage(fmt);
        localTimes(root);
        slip?.reformat();
      },
    }).start();
  }
  sidebarToggle();
  loginHelpers();

  window.addEventListener("offline", () => client.stop());
  window.addEventListener("online", () => client.start());
  client.start();
  window.oddsClient = client;
  window.sportsbook = { client, slip, bets, format };
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
else boot();
