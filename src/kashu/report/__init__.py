"""Renderers of a plan: terminal (Rich), and later HTML, Markdown and Excel."""
