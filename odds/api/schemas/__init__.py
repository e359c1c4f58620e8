"""The REST API's contract: every request and response body as a pydantic model, one module per
router of ``odds/api/`` (``views``: bets and wallet, ``streams``, ``snapshots``, ``ops``, ``game``,
``meta``: health and the OpenAPI document), on the field types, base models and shared refusals
of ``common``.

django-ninja validates each request against these models and generates the OpenAPI document from
them (``odds/api/api.py``); an endpoint declares which it reads and answers. Money and prices
travel as decimal strings (``"10.00"``, ``"2.50"``); requests may also send JSON numbers, read
exactly as decimals (``odds.api.http.json_parse``), never through float.

Error bodies have one shape (``common.ErrorBody``); ``common.refusal`` declares, per answer, the
codes it may carry. Ranges and business rules (stake limits, prices, payments) are the services'
to check; the models check types and shapes, and the bounds that come from ``reducers/rules.py``.
A router's module imports ``common`` and no other router's module (an import contract).
"""
