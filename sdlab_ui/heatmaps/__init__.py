"""The Heatmaps page's sections: axis pickers, click-to-load and the simulation check."""
