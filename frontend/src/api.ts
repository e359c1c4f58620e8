// The REST API (docs/protocol.md, "REST API" and "Control API"): JSON in and out, the session
// cookie for authentication, the csrftoken cookie echoed in X-CSRFToken on writes.
import type { CashOutPolicy } from "./cashout";
import type { Held } from "./protocol";

export interface ApiErrorBody {
  code: string;
  message: string;
  field?: string;
  selections?: { selection_id: number; price_seen: string; price: string }[];
  quote?: string | null;
}

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
    return this.body?.field;
  }
}

export function cookie(name: string, source: string = typeof document === "undefined" ? "" : document.cookie): string {
  for (const part of source.split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return decodeURIComponent(rest.join("="));
  }
  return "";
}

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
    if (error !== undefined) throw new ApiError(response.status, error.code, error.message, error);
    throw new ApiError(response.status, "http_error", `The server answered ${response.status}. Try again.`);
  }
  return payload as T;
}

// --- bodies ---

export interface BetLeg {
  selection_id: number;
  selection: string;
  market_id: number;
  market: string;
  event_id: number;
  event: string;
  price: string;
  price_display: string;
  price_seen: string;
  result: "undecided" | "won" | "lost" | "void";
}

export interface Bet {
  id: number;
  idempotency_key: string;
  kind: "single" | "accumulator";
  status: "pending" | "accepted" | "rejected" | "won" | "lost" | "void" | "cashed_out";
  price_policy: PricePolicy;
  stake: string;
  odds: string;
  potential_return: string;
  payout: string;
  placed_at: number;
  /** A bet held by the in-play delay: when it is decided (epoch ms, the server's clock). */
  accept_at?: number | null;
  settled_at: number | null;
  legs: BetLeg[];
  cash_out?: { available: boolean; quote: string | null };
  reject?: { code: string; message: string };
  /** Why a trader voided the bet, in their words. */
  void_reason?: string | null;
}

export type PricePolicy = "none" | "any" | "better";

export interface PlaceBetRequest {
  v: 1;
  idempotency_key: string;
  stake: string;
  price_policy: PricePolicy;
  selections: { selection_id: number; price: string }[];
}

export interface StreamSpecSlip {
  view: "slip";
  slip: { selection_id: number; market_id: number }[];
  stake: string | null;
}

export interface StreamSpecBets {
  view: "bets";
  bets: {
    bet_id: number;
    stake: string;
    legs: { selection_id: number; market_id: number; price: string; result?: BetLeg["result"] }[];
  }[];
}

export type StreamSpec = StreamSpecSlip | StreamSpecBets;

/** The markets a spec names (those of its slip legs or its bets' legs). */
export function specMarkets(spec: StreamSpec): number[] {
  const legs = spec.view === "slip" ? spec.slip : spec.bets.flatMap((bet) => bet.legs);
  return [...new Set(legs.map((leg) => leg.market_id))];
}

export const api = {
  placeBet: (body: PlaceBetRequest) => apiRequest<{ v: 1; created: boolean; bet: Bet }>("POST", "/api/bets", body),
  bets: (state: "open" | "settled", limit = 50) =>
    apiRequest<{ v: 1; bets: Bet[] }>("GET", `/api/bets?state=${state}&limit=${limit}`),
  cashOut: (betId: number, quote: string, accept: CashOutPolicy) =>
    apiRequest<{ v: 1; bet: Bet }>("POST", `/api/bets/${betId}/cash-out`, { v: 1, quote, accept }),
  wallet: () => apiRequest<{ v: 1; wallet: { currency: string; balance: string } }>("GET", "/api/wallet"),
  subscribe: (spec: StreamSpec) => apiRequest<{ v: 1; channel: string }>("POST", "/api/streams", spec),
  begin: (channel: string, resync: boolean, since: Held = {}) =>
    apiRequest<unknown>(
      "POST",
      `/api/streams/${encodeURIComponent(channel)}/begin${resync ? "?resync=1" : ""}`,
      Object.keys(since).length > 0 ? { since } : undefined,
    ),
  change: (channel: string, spec: StreamSpec) =>
    apiRequest<unknown>("PUT", `/api/streams/${encodeURIComponent(channel)}`, spec),
  unsubscribe: (channel: string) => apiRequest<unknown>("DELETE", `/api/streams/${encodeURIComponent(channel)}`),
};

/** A fresh idempotency key: one per placement attempt, reused only to retry that attempt. */
export function idempotencyKey(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

