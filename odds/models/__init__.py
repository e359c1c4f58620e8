from odds.models.catalogue import Competition, Event, Market, Selection, Sport

__all__ = ["Competition", "Event", "Market", "Selection", "Sport"]
