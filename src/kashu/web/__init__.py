"""`kashu serve`: the planner in a browser (FastAPI + Jinja2, all assets served locally)."""
