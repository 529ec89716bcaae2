"""A training run simulated from its plan: what the Trainer prints (the training block, the console as the run
goes), the learning-rate curve drawn and exported, and the animation's frames and their words."""
