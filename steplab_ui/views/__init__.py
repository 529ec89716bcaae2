"""One module per page's content (the page scripts in `app_pages/` draw them), the lesson renderer and its live
widgets, and the labs (`views/labs/`, one per lab)."""
