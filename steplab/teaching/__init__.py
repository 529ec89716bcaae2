"""Teaching content: lessons, self-study questions, progress, explanations, warnings and the animation's frames."""
