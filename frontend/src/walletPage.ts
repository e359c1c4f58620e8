// The wallet page's forms: deposit, withdraw, deposit, loss and wager limits and breaks, sent to
// the wallet API.
// Each payment form keeps one request id until the server answers, so a double submit or a
// retry after a lost answer pays once. Times are shown in the punter's own time zone.
import { ApiError, apiRequest, idempotencyKey } from "./api";

const AMOUNT = /^[0-9]+(\.[0-9]{1,2})?$/;

/** The amount typed, as the decimal string the API takes, or the sentence that says what is wrong. */
export function parseAmount(raw: string): { amount: string } | { error: string } {
  const text = raw.trim().replace(/^[£€$]/, "").replace(/,/g, "");
  if (text === "") return { error: "Enter an amount." };
  if (!/^[0-9]*\.?[0-9]*$/.test(text) || text === ".") return { error: "Enter the amount as a number, such as 20.00." };
  if (!AMOUNT.test(text)) return { error: "Enter the amount with at most two decimal places." };
  if (!/[1-9]/.test(text)) return { error: "Enter an amount above zero." };
  return { amount: text };
}

function localTimes(root: ParentNode): void {
  const format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  for (const node of root.querySelectorAll<HTMLTimeElement>("time[data-local]")) {
    const when = new Date(node.dateTime);
    if (!Number.isNaN(when.getTime())) node.textContent = format.format(when);
  }
}

function target(form: HTMLFormElement): { path: string; method: string } {
  switch (form.dataset.walletAction) {
    case "deposit":
      return { path: "/api/wallet/deposits", method: "POST" };
    case "withdraw":
      return { path: "/api/wallet/withdrawals", method: "POST" };
    case "limit": {
      const kind = encodeURIComponent(form.dataset.kind ?? "deposit");
      return { path: `/api/wallet/limits/${kind}/${encodeURIComponent(form.dataset.period ?? "")}`, method: "PUT" };
    }
    default:
      return { path: "/api/wallet/break", method: "POST" };
  }
}

function body(form: HTMLFormElement, requestId: string): { body: Record<string, unknown> } | { error: string } {
  if (form.dataset.walletAction === "break") {
    const length = form.querySelector<HTMLInputElement>("input[name=length]:checked")?.value;
    if (length === undefined) return { error: "Choose how long the break lasts." };
    if (!form.querySelector<HTMLInputElement>("input[name=confirm]")?.checked) {
      return { error: "Tick the box to confirm that the break cannot be undone early." };
    }
    return { body: { v: 1, length } };
  }
  const parsed = parseAmount(form.querySelector<HTMLInputElement>("input[name=amount]")?.value ?? "");
  if ("error" in parsed) return parsed;
  if (form.dataset.walletAction === "limit") return { body: { v: 1, amount: parsed.amount } };
  return { body: { v: 1, amount: parsed.amount, request_id: requestId } };
}

function wire(form: HTMLFormElement): void {
  const error = form.querySelector<HTMLElement>(".wallet-error");
  const button = form.querySelector<HTMLButtonElement>("button[type=submit]");
  const input = form.querySelector<HTMLInputElement>("input[name=amount]");
  let requestId = idempotencyKey();
  let busy = false;
  input?.addEventListener("input", () => {
    // A different amount is a different payment.
    requestId = idempotencyKey();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (busy) return;
    const built = body(form, requestId);
    const show = (message: string) => {
      if (error !== null) error.textContent = message;
      input?.setAttribute("aria-invalid", message === "" ? "false" : "true");
    };
    if ("error" in built) {
      show(built.error);
      return;
    }
    show("");
    busy = true;
    if (button !== null) button.disabled = true;
    const { path, method } = target(form);
    apiRequest<unknown>(method, path, built.body)
      .then(() => window.location.reload())
      .catch((failure: unknown) => {
        busy = false;
        if (button !== null) button.disabled = false;
        show(failure instanceof ApiError ? failure.message : "Something went wrong. Try again.");
        // A refusal recorded nothing: the next attempt is a new request. A lost answer keeps the id.
        if (failure instanceof ApiError && failure.status !== 0 && failure.status < 500) requestId = idempotencyKey();
      });
  });
}

export function startWalletPage(root: Document = document): void {
  localTimes(root);
  // The statement's date filter counts days in the punter's own time zone.
  const zone = root.getElementById("ledger-tz") as HTMLInputElement | null;
  if (zone !== null) zone.value = Intl.DateTimeFormat().resolvedOptions().timeZone;
  for (const form of root.querySelectorAll<HTMLFormElement>("form[data-wallet-action]")) wire(form);
}
