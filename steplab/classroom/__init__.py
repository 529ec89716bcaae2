"""The live class: an instructor opens a class, students join with a short code, answer polls; the room sees
only the aggregate until the instructor reveals the engine's answer.

* `polls` — what a poll asks (the current setup's total steps, a bank question, a setup change), how an answer
  is checked, and the reveal: the engine's answer, its worked arithmetic and where common wrong answers come
  from. Pure: no database, no Streamlit.
* `tables` — the SQLAlchemy Core tables; `migrations/` the Alembic history that creates them.
* `store` — the one door to the database (SQLite in WAL mode by default, PostgreSQL by URL): classes, seats,
  polls, answers, progress, roster, expiry. Tokens are stored only as hashes.
"""
