"""The Overload page's sections: its inputs (``controls``, ``fields``), its headline and table
(``sections``) and its goodput chart (``figures``)."""
