// The wallet balance in the header: fetched on load, after every bet or cash-out, and now and
// then for settlements that happen meanwhile.
import { api } from "./api";
import { formatMoney } from "./decimal";
import { setText } from "./dom";

const REFRESH_MS = 30_000;

export class WalletBadge {
  private readonly node = document.getElementById("wallet-balance");

  start(): void {
    if (this.node === null) return;
    void this.refresh();
    window.setInterval(() => void this.refresh(), REFRESH_MS);
    document.addEventListener("sportsbook:money", () => void this.refresh());
  }

  async refresh(): Promise<void> {
    if (this.node === null) return;
    try {
      const { wallet } = await api.wallet();
      const previous = this.node.dataset.balance;
      this.node.dataset.balance = wallet.balance;
      setText(this.node, formatMoney(wallet.balance, wallet.currency));
      if (previous && previous !== wallet.balance) {
        this.node.classList.remove("changed");
        void this.node.offsetWidth;
        this.node.classList.add("changed");
      }
    } catch {
      // Keep the last balance shown; the next refresh tries again.
    }
  }
}

/** Tell the page that a bet changed without money moving (a leg of an accumulator decided). */
export function betsChanged(): void {
  document.dispatchEvent(new CustomEvent("sportsbook:bets"));
}

/** Tell the page that money moved (a bet placed, a cash-out): the balance and lists refresh. */
export function moneyMoved(): void {
  document.dispatchEvent(new CustomEvent("sportsbook:money"));
}
