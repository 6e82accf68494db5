"""The LLM serving page's sections (issue 23)."""
