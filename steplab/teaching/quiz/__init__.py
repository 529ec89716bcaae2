"""Self-study questions: the bank in `lessons/questions.yaml`, concrete questions drawn with a seed, grading.

Four kinds of question:

* `numeric` — a setup (a preset and/or field values) with some fields drawn from `params` lists by the seed;
  the answer is a named quantity (`steplab.trainer.quantities`) of the engine's plan, never a stored literal.
* `choice` — options with `correct: true` on the right ones and an `explanation`.
* `sliders` — the learner sets some fields (`controls`) so that `target` holds; graded by planning
  the learner's setup with the engine.
* `grpo` — a TRL `GRPOTrainer` run (`setup` and `params` take the setup's fields and TRL's GRPO fields: N prompts,
  B, P, GA, `num_generations`, `num_iterations`, `steps_per_generation` ...); the answer is a named quantity of
  `steplab.teaching.grpo_counting` (steps, prompts per generation round, rounds ...), planned by `steplab.trl`, and
  its placeholders are the run's quantities and inputs. Graded as `numeric`, with GRPO's arithmetic.

Text may hold placeholders, the locale files' `{name}` / `{name:spec}` filled by `steplab.i18n.fill`: `{field}`
or `{quantity}` of the question's own setup, `{alias.quantity}` of a named extra setup (`setups:`) or a preset id,
`{measured.<name>.<field>}` for the course's measured figures, and `{target}` (a sliders question's drawn target).
Feedback is a `Message` (catalogue keys `quiz.*`); the authored texts stay `Text`, filled. Responses are
untrusted: anything a browser, a test or a URL could send is graded (wrong, or "not a number"), never raised.
"""

from steplab.teaching.quiz.bank import bank_by_id, load_bank, parse_bank
from steplab.teaching.quiz.generate import draw, from_token, generate
from steplab.teaching.quiz.grade import grade, parse_number
from steplab.teaching.quiz.schema import (
    BANK_FILE,
    KINDS,
    Control,
    Feedback,
    Option,
    Question,
    QuestionSpec,
    QuizError,
    Target,
)

__all__ = ["BANK_FILE", "KINDS", "Control", "Feedback", "Option", "Question", "QuestionSpec", "QuizError", "Target",
           "bank_by_id", "draw", "from_token", "generate", "grade", "load_bank", "parse_bank", "parse_number"]
