"""The Tail at scale page's sections: its inputs, headline, heatmap and simulation check."""
