// Generated from odds/api/schemas/ by `make contract` (manage.py contract --write).
// Edit the schemas, not this file; tests/unit/test_contract.py fails when it is not current.

/**
 * One alert Prometheus holds: ``firing``, or ``pending`` (over its threshold, not yet for
 * its rule's whole ``for``).
 */
export interface AlertNow {
  name: string;
  state: string;
  severity: string;
  summary: string;
  labels: Record<string, string>;
  active_at: string | null;
}

export interface AlertsNow {
  available: boolean;
  error: string | null;
  alerts: AlertNow[];
}

export interface Balance {
  currency: string;
  balance: string;
}

export interface BeginRefused {
  v: 1;
  error: BeginRefusedDetail;
}

export interface BeginRefusedDetail {
  code: "bad_json" | "invalid" | "required" | "number_out_of_range" | "bad_since";
  message: string;
  field?: string | null;
}

/** Optional. `since`: the markets the client holds; the image carries only those that moved since. */
export interface BeginRequest {
  since?: Record<string, [number, string]>;
}

export interface BetAccountRefused {
  v: 1;
  error: BetAccountRefusedDetail;
}

export interface BetAccountRefusedDetail {
  code: "csrf_failed" | "excluded" | "email_unverified" | "over_loss_limit" | "over_wager_limit" | "session_limit" | "reality_check";
  message: string;
  field?: string | null;
  period?: "day" | "week" | "month" | null;
  limit?: string | null;
  left?: string | null;
  resets_at?: number | null;
}

export interface BetList {
  v: 1;
  bets: BetOut[];
}

/**
 * A bet as the punter sees it. ``cash_out``: the live offer of an open bet; ``accept_at``: a
 * bet held by the in-play delay or referred to a trader (``pending``) is decided then;
 * ``offer``: a trader's counter-offer on a referred bet, for the punter to take or turn down;
 * ``reject``: why it was refused; ``void_reason``: why a trader voided it.
 */
export interface BetOut {
  id: number;
  idempotency_key: string;
  kind: "single" | "accumulator";
  status: "pending" | "accepted" | "rejected" | "won" | "lost" | "void" | "cashed_out";
  price_policy: "none" | "any" | "better";
  stake: string;
  odds: string;
  odds_display: string;
  potential_return: string;
  payout: string;
  /** epoch milliseconds */
  placed_at: number;
  settled_at: number | null;
  legs: LegOut[];
  cash_out?: CashOutOffer | null;
  accept_at?: number | null;
  reject?: Rejection | null;
  void_reason?: string | null;
  offer?: OfferOut | null;
}

/** ``POST /api/bets``: one selection is a single, several are an accumulator. */
export interface BetPlaceRequest {
  v?: 1;
  /** printable characters; unique per punter; a retry with the same key and body returns the first attempt's bet */
  idempotency_key: string;
  /** 0.10 to 10000.00 */
  stake: string | number;
  price_policy?: "none" | "any" | "better";
  selections: LegIn[];
}

export interface BetPlaced {
  v: 1;
  created: boolean;
  bet: BetOut;
}

export interface BetRefused {
  v: 1;
  error: BetRefusedDetail;
}

export interface BetRefusedDetail {
  code: "bad_json" | "invalid" | "required" | "number_out_of_range" | "stake_too_low" | "stake_too_high" | "return_too_high" | "unknown_selection" | "same_event" | "idempotency_key_reused";
  message: string;
  field?: string | null;
}

export interface BetRejected {
  v: 1;
  error: BetRejectedDetail;
  bet: BetOut;
}

export interface BetRejectedDetail {
  code: "market_suspended" | "market_closed" | "selection_unavailable" | "price_changed" | "insufficient_funds";
  message: string;
  field?: string | null;
  selections?: LegPrice[] | null;
}

export interface BodyRefused {
  v: 1;
  error: BodyRefusedDetail;
}

export interface BodyRefusedDetail {
  code: "bad_json" | "invalid" | "required" | "number_out_of_range";
  message: string;
  field?: string | null;
}

export interface BreakOut {
  v: 1;
  break: BreakTaken;
}

/** ``POST /api/wallet/break``: a time-out or self-exclusion, by length. */
export interface BreakRequest {
  v?: 1;
  length: "time_out_24h" | "time_out_7d" | "time_out_30d" | "exclude_6m" | "exclude_1y" | "exclude_5y";
}

export interface BreakTaken {
  exclusion: "time_out" | "self_exclusion";
  /** epoch milliseconds */
  until: number;
}

export interface CashOutOffer {
  available: boolean;
  quote: string | null;
}

export interface CashOutRefused {
  v: 1;
  error: CashOutRefusedDetail;
}

export interface CashOutRefusedDetail {
  code: "quote_changed" | "cash_out_unavailable";
  message: string;
  field?: string | null;
  quote?: string | null;
}

/**
 * ``POST /api/bets/<id>/cash-out``: the quote the punter confirmed, and how far it may have
 * moved (``accept``, one of ``betting.CASH_OUT_POLICIES``).
 */
export interface CashOutRequest {
  v?: 1;
  /** the cash-out quote the punter confirmed (positive) */
  quote: string | number;
  /** How far the quote may have moved: `exact` only the quote confirmed, `better` (default) it or a higher one, `any` whatever it is now. The current quote is paid. */
  accept?: "exact" | "better" | "any";
}

export interface ChannelCreated {
  v: 1;
  /** 32 characters for a punter's channel; 40 for a query's shared channel */
  channel: string;
  spec: SpecOut;
  websocket: string;
  /** a query's shared channel: attach to it (anyone may); it needs no begin and takes no change */
  shared: boolean;
}

export interface ChannelEndNotFound {
  v: 1;
  error: ChannelEndNotFoundDetail;
}

export interface ChannelEndNotFoundDetail {
  code: "no_such_channel" | "not_found";
  message: string;
  field?: string | null;
}

export interface ChannelEnded {
  v: 1;
  channel: string;
  ended: true;
}

export interface ChannelRow {
  channel: string;
  user_id: number;
  /** the username (#id when the user is gone) */
  user: string;
  view: string;
  query: Record<string, unknown> | null;
  markets: number[];
  status: string;
  seq: number;
  /** epoch milliseconds */
  created: number;
  /** epoch milliseconds */
  seen: number;
  partitions: Record<string, number>;
}

export interface ChannelSpec {
  v: 1;
  channel: string;
  spec: SpecOut;
}

export interface ChannelStatus {
  v: 1;
  channel: string;
  status: string;
}

export interface ChannelsOut {
  v: 1;
  channels: ChannelRow[];
}

export interface ClaimedBetIn {
  bet_id: number;
  /** a decimal amount, 0-10000.00 */
  stake: string;
  legs: ClaimedLegIn[];
}

export interface ClaimedLegIn {
  selection_id: number;
  market_id: number;
  /** decimal odds, 1.01-1000 */
  price: string;
  /** the leg's result so far, as GET /api/bets reports it; a won leg counts at 1.00 */
  result?: "undecided" | "won" | "lost" | "void";
}

export interface CommandUnavailable {
  v: 1;
  error: CommandUnavailableDetail;
}

export interface CommandUnavailableDetail {
  code: "database_unavailable" | "command_not_sent" | "state_unavailable";
  message: string;
  field?: string | null;
}

export interface CompetitionView {
  id: number;
  name: string;
}

export interface ComponentHealth {
  ok: boolean;
}

export interface ControlLimited {
  v: 1;
  error: ControlLimitedDetail;
}

export interface ControlLimitedDetail {
  code: "rate_limited";
  message: string;
  field?: string | null;
  retry_after_s?: number | null;
}

export interface CsrfFailed {
  v: 1;
  error: CsrfFailedDetail;
}

export interface CsrfFailedDetail {
  code: "csrf_failed";
  message: string;
  field?: string | null;
}

export interface DatabaseUnavailable {
  v: 1;
  error: DatabaseUnavailableDetail;
}

export interface DatabaseUnavailableDetail {
  code: "database_unavailable" | "state_unavailable";
  message: string;
  field?: string | null;
}

export interface DepositError {
  v: 1;
  error: DepositErrorDetail;
}

export interface DepositErrorDetail {
  code: "bad_json" | "invalid" | "required" | "number_out_of_range" | "too_low" | "too_high" | "over_deposit_limit";
  message: string;
  field?: string | null;
  period?: "day" | "week" | "month" | null;
  limit?: string | null;
  left?: string | null;
  resets_at?: number | null;
}

/** Every refusal: ``{"v": 1, "error": {"code", "message", "field"?}}``. */
export interface ErrorBody {
  v: 1;
  error: ErrorDetail;
}

export interface ErrorDetail {
  code: string;
  message: string;
  field?: string | null;
}

export interface EventView {
  id: number;
  home?: string | null;
  away?: string | null;
  starts_at?: string | null;
  status?: string | null;
  sport?: string | null;
  competition?: CompetitionView | null;
  markets: MarketView[];
}

export interface Excluded {
  v: 1;
  error: ExcludedDetail;
}

export interface ExcludedDetail {
  code: "csrf_failed" | "excluded" | "email_unverified";
  message: string;
  field?: string | null;
}

/** ``POST /api/game/answers``: the punter's answer to one open question of an event's game. */
export interface GameAnswerIn {
  v?: 1;
  event_id: number;
  question_id: number;
  /** one of the question's `options` */
  choice: "home" | "away" | "draw" | "none" | "yes" | "no";
}

export interface GameAnswerRefused {
  v: 1;
  error: GameAnswerRefusedDetail;
}

export interface GameAnswerRefusedDetail {
  code: "question_closed" | "question_void" | "already_answered";
  message: string;
  field?: string | null;
}

/**
 * The answer went to the game reducer; its decision (accepted, or refused with its reason,
 * then settled) comes on the punter's game channel.
 */
export interface GameAnswerTaken {
  v: 1;
  answer_id: string;
  question_id: number;
  choice: string;
  status: "sent";
}

/** A leaderboard: its top, how many play, and the punter's place when logged in. */
export interface GameBoard {
  v: 1;
  scope: string;
  title: string;
  top: Record<string, unknown>[];
  players: number;
  me: GameMe | null;
}

export interface GameChoiceRefused {
  v: 1;
  error: GameChoiceRefusedDetail;
}

export interface GameChoiceRefusedDetail {
  code: "bad_json" | "invalid" | "required" | "number_out_of_range" | "bad_choice";
  message: string;
  field?: string | null;
}

export interface GameDecided {
  v: 1;
  error: GameDecidedDetail;
}

export interface GameDecidedDetail {
  code: "question_decided";
  message: string;
  field?: string | null;
}

export interface GameMe {
  rank: number | null;
  points: number | null;
}

export interface GameNotFound {
  v: 1;
  error: GameNotFoundDetail;
}

export interface GameNotFoundDetail {
  code: "unknown_question";
  message: string;
  field?: string | null;
}

/**
 * An event's game: every question (docs/protocol.md, *The predictor game*) and its
 * leaderboard's top.
 */
export interface GameState {
  v: 1;
  event_id: number;
  questions: Record<string, unknown>[];
  top: Record<string, unknown>[];
  players: number;
}

export interface GameUnavailable {
  v: 1;
  error: GameUnavailableDetail;
}

export interface GameUnavailableDetail {
  code: "database_unavailable" | "not_sent";
  message: string;
  field?: string | null;
}

/** ``POST /trading/api/game/questions/<id>/void``: void one undecided question. */
export interface GameVoidIn {
  v?: 1;
  event_id: number;
  reason: string;
}

export interface GameVoidRefused {
  v: 1;
  error: GameVoidRefusedDetail;
}

export interface GameVoidRefusedDetail {
  code: "bad_json" | "invalid" | "required" | "number_out_of_range" | "bad_reason";
  message: string;
  field?: string | null;
}

export interface GameVoidRequested {
  v: 1;
  question_id: number;
  status: "void requested";
}

/** Whether each component is healthy; why not is for operators (``/healthz/detail``). */
export interface Health {
  ok: boolean;
  failing: ("kafka" | "redis" | "postgres" | "reducers" | "celery" | "feed")[];
  components: Partial<Record<"kafka" | "redis" | "postgres" | "reducers" | "celery" | "feed", ComponentHealth>>;
}

export interface KafkaHealth {
  brokers: number;
  replication_factor?: number | null;
  partitions?: number | null;
  under_replicated: number;
  offline: number;
  leaders?: Record<string, number> | null;
}

export interface LatencyKept {
  v: 1;
  kept: number;
}

/** Latency samples measured by an operator's browser (ms). */
export interface LatencySamples {
  samples: Sample[];
}

export interface LedgerEntryOut {
  id: number;
  kind: "deposit" | "withdrawal" | "stake" | "stake_release" | "payout" | "refund" | "cash_out" | "stake_return" | "resettle";
  amount: string;
  balance_after: string;
  bet_id: number | null;
  reference: string;
  /** epoch milliseconds */
  ts: number;
}

export interface LegIn {
  selection_id: number;
  /** the price the punter saw, 1.01-1000 */
  price: string | number;
}

export interface LegOut {
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

export interface LegPrice {
  selection_id: number;
  price_seen: string;
  price: string;
}

export interface LiabilityOut {
  v: 1;
  selections: LiabilityRow[];
}

export interface LiabilityRow {
  selection_id: number;
  selection: string;
  market_id: number | null;
  market: string;
  event: string;
  /** the selection's decimal price (empty when it is gone) */
  price: string;
  liability: string;
  liability_pence: number;
  /** the book's currency, every wallet's liability converted into it */
  currency: string;
  bets: number;
}

export interface LimitOut {
  kind: "deposit" | "loss" | "wager";
  period: "day" | "week" | "month";
  amount: string;
  pending_amount: string | null;
  pending_from: number | null;
}

/**
 * ``PUT /api/wallet/limits/<kind>/<period>`` (and ``/api/wallet/limits/<period>``, a deposit
 * limit): the new limit.
 */
export interface LimitRequest {
  v?: 1;
  /** the new limit */
  amount: string | number;
}

export interface MarketView {
  market_id: number;
  name?: string | null;
  kind?: string | null;
  /** The stream's sequence; 0: not priced yet. */
  seq: number;
  status: string;
  tradable: boolean;
  selections: SelectionView[];
}

export interface NoChannel {
  v: 1;
  error: NoChannelDetail;
}

export interface NoChannelDetail {
  code: "no_such_channel" | "not_found";
  message: string;
  field?: string | null;
}

export interface NotAuthenticated {
  v: 1;
  error: NotAuthenticatedDetail;
}

export interface NotAuthenticatedDetail {
  code: "not_authenticated";
  message: string;
  field?: string | null;
}

export interface NotFound {
  v: 1;
  error: NotFoundDetail;
}

export interface NotFoundDetail {
  code: "not_found";
  message: string;
  field?: string | null;
}

/** ``POST /api/bets/<id>/offer``: whether the punter takes the trader's offer. */
export interface OfferAnswer {
  v?: 1;
  /** true takes the offer, false turns it down */
  accept: boolean;
}

/**
 * A trader's counter-offer on a referred bet: the stake, the single's new price (null: the
 * prices taken) and the return, in the wallet's currency; ``until`` when it runs out.
 */
export interface OfferOut {
  stake: string;
  price: string | null;
  potential_return: string;
  /** epoch milliseconds */
  until: number;
}

export interface OfferRefused {
  v: 1;
  error: OfferRefusedDetail;
}

export interface OfferRefusedDetail {
  code: "no_offer" | "offer_expired";
  message: string;
  field?: string | null;
}

export interface OneBet {
  v: 1;
  bet: BetOut;
}

/** OpenAPI 3.1. */
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, unknown>;
}

export interface OpsHistory {
  v: 1;
  range: "5m" | "15m" | "1h" | "6h" | "24h" | "7d";
  stride_s: number;
  ts: number[];
  series: Record<string, (number | null)[]>;
}

export interface OpsSnapshot {
  v: 1;
  /** epoch milliseconds */
  ts: number;
  queries: Record<string, unknown>;
  latency: Record<string, unknown>;
  websockets: Record<string, number>;
  dead_letters?: Record<string, number> | null;
  late_records?: Record<string, number> | null;
  redis_memory_bytes?: number | null;
  celery_queue_depth?: number | null;
  kafka?: KafkaHealth | null;
  latency_markets: number[];
  alerts?: AlertsNow | null;
}

export interface PaymentConflict {
  v: 1;
  error: PaymentConflictDetail;
}

export interface PaymentConflictDetail {
  code: "request_id_reused";
  message: string;
  field?: string | null;
}

export interface PaymentError {
  v: 1;
  error: PaymentErrorDetail;
}

export interface PaymentErrorDetail {
  code: "bad_json" | "invalid" | "required" | "number_out_of_range" | "too_low" | "too_high";
  message: string;
  field?: string | null;
}

/** A deposit or withdrawal and the balance after it; ``created`` is false for a repeat. */
export interface PaymentOut {
  v: 1;
  created: boolean;
  entry: LedgerEntryOut;
  wallet: Balance;
}

/**
 * ``POST /api/wallet/deposits`` and ``/api/wallet/withdrawals``: an amount in pounds and
 * pence, and the form's ``request_id``: a repeated request with the same id pays once.
 */
export interface PaymentRequest {
  v?: 1;
  /** pounds and pence, above zero */
  amount: string | number;
  /** Chosen by the client per payment: a repeat with the same id pays once. */
  request_id: string;
}

export interface PlacementUnavailable {
  v: 1;
  error: PlacementUnavailableDetail;
}

export interface PlacementUnavailableDetail {
  code: "database_unavailable" | "state_unavailable" | "overloaded";
  message: string;
  field?: string | null;
  retry_after_s?: number | null;
}

export interface PlayOut {
  v: 1;
  settings: PlaySettings;
  /** null: no play session (signed in before they existed) */
  session: PlaySessionOut | null;
}

/**
 * The login's play session: seconds are as the server counts them, so a page's timer needs
 * no clock of its own beyond counting down.
 */
export interface PlaySessionOut {
  /** epoch milliseconds */
  started_at: number;
  played_s: number;
  /** null: no limit in this session */
  time_limit_s: number | null;
  ends_at: number | null;
  time_left_s: number | null;
  /** null: no reality checks in this session */
  reality_check_s: number | null;
  check_due_at: number | null;
  /** 0 while a reality check waits */
  check_due_in_s: number | null;
  /** a reality check waits: bets are refused until it is acknowledged */
  check_pending: boolean;
  currency: string;
  staked: string;
  returned: string;
  /** returns minus stakes of the bets placed in this session */
  net_result: string;
}

export interface PlaySettings {
  /** null: no limit */
  session_limit_min: number | null;
  /** null: no reality checks */
  reality_check_min: number | null;
  session_limit_choices_min: number[];
  reality_check_choices_min: number[];
}

export interface PlaySettingsError {
  v: 1;
  error: PlaySettingsErrorDetail;
}

export interface PlaySettingsErrorDetail {
  code: "bad_json" | "invalid" | "required" | "number_out_of_range";
  message: string;
  field?: string | null;
}

/**
 * ``PUT /api/play/settings``: the session time limit and the reality-check interval in
 * minutes, each one of the offered choices or null for none.
 */
export interface PlaySettingsRequest {
  v?: 1;
  session_limit_min?: 30 | 60 | 120 | 240 | 480 | null;
  reality_check_min?: 15 | 30 | 60 | null;
}

/** At least one condition must be given (not null). */
export interface QueryIn {
  sport?: string | null;
  in_play?: boolean | null;
  starting_within_minutes?: number | null;
  competition?: number | null;
  headline?: boolean | null;
}

export interface QueryRefused {
  v: 1;
  error: QueryRefusedDetail;
}

export interface QueryRefusedDetail {
  code: "invalid";
  message: string;
  field?: string | null;
}

export interface RangeRefused {
  v: 1;
  error: RangeRefusedDetail;
}

export interface RangeRefusedDetail {
  code: "invalid";
  message: string;
  field?: string | null;
}

export interface RateLimited {
  v: 1;
  error: RateLimitedDetail;
}

export interface RateLimitedDetail {
  code: "rate_limited";
  message: string;
  field?: string | null;
  retry_after_s?: number | null;
}

export interface Rejection {
  code: string;
  message: string;
}

export interface Sample {
  e2e: number;
  ws?: number;
}

export interface SelectionView {
  id: number;
  name: string;
  price: string;
  status: string;
}

export interface SettlementOut {
  v: 1;
  market_id: number;
  market_status: "open" | "suspended" | "closed" | "settled";
  total: number;
  settled: number;
  done: boolean;
}

export interface SlipLegIn {
  selection_id: number;
  market_id: number;
}

export interface SpecOut {
  view: "markets" | "slip" | "bets" | "game";
  markets: number[];
  query: Record<string, unknown> | null;
  slip: SlipLegIn[];
  stake: string | null;
  bets: Record<string, unknown>[];
  /** a game view's event */
  event?: number | null;
}

export interface StaffOnly {
  v: 1;
  error: StaffOnlyDetail;
}

export interface StaffOnlyDetail {
  code: "staff_only" | "csrf_failed";
  message: string;
  field?: string | null;
}

export interface StaffRead {
  v: 1;
  error: StaffReadDetail;
}

export interface StaffReadDetail {
  code: "staff_only";
  message: string;
  field?: string | null;
}

/**
 * What a channel streams. A markets view needs `markets` or `query`, a slip view at least
 * one leg; each of `bets` must be a bet that placement would take (a potential return, stake
 * times the prices, within the book's limit). At most 500 distinct markets.
 */
export interface SubscriptionSpec {
  view?: "markets" | "slip" | "bets" | "game";
  markets?: number[] | null;
  query?: QueryIn | null;
  slip?: SlipLegIn[] | null;
  stake?: string | null;
  bets?: ClaimedBetIn[] | null;
  event?: number | null;
}

export interface TooLarge {
  v: 1;
  error: TooLargeDetail;
}

export interface TooLargeDetail {
  code: "body_too_large";
  message: string;
  field?: string | null;
}

export interface TooManyChannels {
  v: 1;
  error: TooManyChannelsDetail;
}

export interface TooManyChannelsDetail {
  code: "too_many_channels";
  message: string;
  field?: string | null;
}

/**
 * The same for every punter (no cookie read or set), cacheable. Each market's `seq` and
 * `status` go in a `watch`'s `since` (docs/protocol.md), so the stream then brings only what moved.
 */
export interface ViewSnapshot {
  type: "view.snapshot";
  v: 1;
  view: string;
  /** When it was taken (epoch ms). */
  at: number;
  events: EventView[];
}

export interface WalletLimitOut {
  v: 1;
  limit: LimitOut;
}

export interface WalletOut {
  v: 1;
  wallet: Balance;
  /** what corrected results clawed back beyond the balance; the next credits are taken for it first */
  owed: string;
  ledger: LedgerEntryOut[];
}

export interface WithdrawalError {
  v: 1;
  error: WithdrawalErrorDetail;
}

export interface WithdrawalErrorDetail {
  code: "bad_json" | "invalid" | "required" | "number_out_of_range" | "too_low" | "too_high" | "insufficient_funds";
  message: string;
  field?: string | null;
}
