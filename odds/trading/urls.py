"""The trading pages (staff only): events, markets, results and settlement, liability, the risk
view, the bet ticker, referred bets and customers' limits, the price movers, channels."""

from django.urls import path

from odds.trading import views as trading
from odds.trading import views_customers as customers
from odds.trading import views_resettle as resettle

urlpatterns = [
    path("trading/", trading.markets_page, name="trading-markets"),
    path("trading/events", trading.event_create_view, name="trading-event-create"),
    path("trading/event/<int:event_id>/", trading.event_page, name="trading-event"),
    path("trading/event/<int:event_id>/suspend", trading.event_suspend_view, name="trading-event-suspend"),
    path("trading/event/<int:event_id>/resume", trading.event_resume_view, name="trading-event-resume"),
    path(
        "trading/competitions/<int:competition_id>/suspend",
        trading.competition_suspend_view,
        name="trading-competition-suspend",
    ),
    path(
        "trading/competitions/<int:competition_id>/resume",
        trading.competition_resume_view,
        name="trading-competition-resume",
    ),
    path("trading/markets/<int:market_id>/suspend", trading.market_suspend_view, name="trading-market-suspend"),
    path("trading/markets/<int:market_id>/resume", trading.market_resume_view, name="trading-market-resume"),
    path("trading/markets/<int:market_id>/price", trading.selection_price_view, name="trading-market-price"),
    path("trading/markets/<int:market_id>/margin", trading.market_margin_view, name="trading-market-margin"),
    path("trading/markets/<int:market_id>/result", trading.market_result_view, name="trading-market-result"),
    path("trading/markets/<int:market_id>/settle", trading.market_settle_view, name="trading-market-settle"),
    path(
        "trading/markets/<int:market_id>/result/confirm",
        trading.market_result_confirm_view,
        name="trading-market-result-confirm",
    ),
    path(
        "trading/markets/<int:market_id>/settle/confirm",
        trading.market_settle_confirm_view,
        name="trading-market-settle-confirm",
    ),
    path("trading/markets/<int:market_id>/settlement", trading.settlement_page, name="trading-settlement"),
    path("trading/markets/<int:market_id>/resettle", resettle.resettle_page, name="trading-market-resettle"),
    path("trading/liability", trading.liability_page, name="trading-liability"),
    path("trading/risk/", trading.risk_page, name="trading-risk"),
    path("trading/ticker/", trading.ticker_page, name="trading-ticker"),
    path("trading/referrals/", customers.referrals_page, name="trading-referrals"),
    path("trading/referrals/<int:bet_id>/decide", customers.referral_decide_view, name="trading-referral-decide"),
    path("trading/referrals/<int:bet_id>/offer", customers.referral_offer_view, name="trading-referral-offer"),
    path("trading/customers/<int:user_id>/", customers.customer_page, name="trading-customer"),
    path("trading/movers/", trading.movers_page, name="trading-movers"),
    path("trading/audit", trading.audit_page, name="trading-audit"),
    path("trading/rates", trading.rates_page, name="trading-rates"),
    path("trading/bets/<int:bet_id>/void", trading.bet_void_view, name="trading-bet-void"),
    path("trading/audit.csv", trading.audit_csv, name="trading-audit-csv"),
    path("trading/subscriptions", trading.subscriptions_page, name="trading-subscriptions"),
]
