"""The Advice & cost page's sections: the recommendation, its levers, and hardware pricing."""
