"""The Lab page's sections: headline, diagram, scenario cards, comparison, accuracy, downloads."""
