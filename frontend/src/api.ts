// The REST API (docs/protocol.md, "REST API" and "Control API"): JSON in and out, the session
// cookie for authentication, the csrftoken cookie echoed in X-CSRFToken on writes.
import type { CashOutPolicy } from "./cashout";
import type {
  BetList,
  BetOut,
  BetPlaceRequest,
  BetPlaced,
  BetRejectedDetail,
  CashOutRefusedDetail,
  ChannelCreated,
  ChannelSpec,
  ChannelStatus,
  ClaimedBetIn,
  ErrorDetail,
  LegOut,
  OneBet,
  SlipLegIn,
  WalletOut,
} from "./contract/api";
import type { Held } from "./protocol";

// The bodies' types are generated from the API's pydantic schemas (src/contract/api.ts).

/** An error body's ``error``: its code, message and field, and what some refusals add (a rejected
 * bet's current prices, a refused cash-out's new quote). */
export type ApiErrorBody = ErrorDetail & Partial<Pick<BetRejectedDetail, "selections">> & Partial<Pick<CashOutRefusedDetail, "quote">>;

/** A refusal from the server (4xx/5xx with the error shape), or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: ApiErrorBody | null = null,
  ) {
    super(message);
  }

  get field(): string | undefined {
    return this.body?.field ?? undefined;
  }
}

export function cookie(name: string, source: string = typeof document === "undefined" ? "" : document.cookie): string {
  for (const part of source.split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return decodeURIComponent(rest.join("="));
  }
  return "";
}

// Refusals for the punter's play session, which the reality check (realityCheck.ts) answers.
const ACCOUNT_REFUSALS = new Set(["reality_check", "session_limit"]);

export async function apiRequest<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET") headers["X-CSRFToken"] = cookie("csrftoken");
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "network", "The connection failed. Check your network and try again.");
  }
  const text = await response.text();
  let payload: unknown = null;
  try {
    payload = text ? JSON.parse(text) : null;
  } catch {
    payload = null;
  }
  if (!response.ok) {
    const error = (payload as { error?: ApiErrorBody } | null)?.error;
    if (error !== undefined && ACCOUNT_REFUSALS.has(error.code) && typeof window !== "undefined") {
      window.dispatchEvent(new CustomEvent("sportsbook:account-refusal", { detail: error.code }));
    }
    if (error !== undefined) throw new ApiError(response.status, error.code, error.message, error);
    throw new ApiError(response.status, "http_error", `The server answered ${response.status}. Try again.`);
  }
  return payload as T;
}

// --- bodies ---

export type BetLeg = LegOut;
export type Bet = BetOut;
export type PricePolicy = BetOut["price_policy"];
export type PlaceBetRequest = BetPlaceRequest;

/** The specs the pages subscribe with: a slip's legs and stake, or the punter's open bets. */
export interface StreamSpecSlip {
  view: "slip";
  slip: SlipLegIn[];
  stake: string | null;
}

export interface StreamSpecBets {
  view: "bets";
  bets: ClaimedBetIn[];
}

export type StreamSpec = StreamSpecSlip | StreamSpecBets;

/** The markets a spec names (those of its slip legs or its bets' legs). */
export function specMarkets(spec: StreamSpec): number[] {
  const legs = spec.view === "slip" ? spec.slip : spec.bets.flatMap((bet) => bet.legs);
  return [...new Set(legs.map((leg) => leg.market_id))];
}

export const api = {
  placeBet: (body: PlaceBetRequest) => apiRequest<BetPlaced>("POST", "/api/bets", body),
  bets: (state: "open" | "settled", limit = 50) => apiRequest<BetList>("GET", `/api/bets?state=${state}&limit=${limit}`),
  cashOut: (betId: number, quote: string, accept: CashOutPolicy) =>
    apiRequest<OneBet>("POST", `/api/bets/${betId}/cash-out`, { v: 1, quote, accept }),
  answerOffer: (betId: number, accept: boolean) => apiRequest<OneBet>("POST", `/api/bets/${betId}/offer`, { v: 1, accept }),
  wallet: () => apiRequest<WalletOut>("GET", "/api/wallet"),
  subscribe: (spec: StreamSpec) => apiRequest<ChannelCreated>("POST", "/api/streams", spec),
  begin: (channel: string, resync: boolean, since: Held = {}) =>
    apiRequest<ChannelStatus>(
      "POST",
      `/api/streams/${encodeURIComponent(channel)}/begin${resync ? "?resync=1" : ""}`,
      Object.keys(since).length > 0 ? { since } : undefined,
    ),
  change: (channel: string, spec: StreamSpec) =>
    apiRequest<ChannelSpec>("PUT", `/api/streams/${encodeURIComponent(channel)}`, spec),
  unsubscribe: (channel: string) => apiRequest<ChannelStatus>("DELETE", `/api/streams/${encodeURIComponent(channel)}`),
};

/** A fresh idempotency key: one per placement attempt, reused only to retry that attempt. */
export function idempotencyKey(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

