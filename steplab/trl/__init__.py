"""TRL's trainers counted as exactly as the Trainer: GRPO's generation rounds, DPO's pairs, SFT's packing.

`settings` (the TRL configs' own defaults; the trainer class and TRL's count fields are rows of
`trainer.fields.FIELDS`, so a `TrainingSetup` carries them), `grpo`
(`GRPOConfig`'s derived sizes and refusals, `RepeatSampler`'s dataloader, the generation rounds), `packing`
(`SFTConfig(packing=True)`: the examples `pack_dataset` makes of token lengths), `plan` (a setup and TRL settings
into one plan, and its record). Every rule carries the TRL 1.16.0 file:line it comes from;
`tests/test_trl_vs_steplab.py` holds them to real TRL runs.
"""
