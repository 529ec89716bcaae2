"""Home: what StepLab is, the course setup at a glance, and where to go next."""

import streamlit as st

from steplab.i18n import fmt_int, t
from steplab.trainer.profiles import PROFILES
from steplab_ui.shell import layout, navigation
from steplab_ui.shell.page import page

context = page("home")
lang = context.lang
plan = context.plan()
if plan is not None:
    s = plan.setup
    gpus = t(lang, "home.gpus.one" if s.world_size == 1 else "home.gpus.other", n=fmt_int(s.world_size))
    epochs = t(lang, "home.epochs.one" if s.num_train_epochs == 1 else "home.epochs.other", n=f"{s.num_train_epochs:g}")
    st.markdown(t(lang, "home.current", samples=fmt_int(s.num_samples), batch=s.per_device_train_batch_size,
                  accumulation=s.gradient_accumulation_steps, gpus=gpus, epochs=epochs,
                  micro=fmt_int(plan.micro_batches_per_epoch), per_epoch=fmt_int(plan.num_update_steps_per_epoch),
                  total=fmt_int(plan.max_steps), effective=fmt_int(plan.total_train_batch_size)))
st.subheader(t(lang, "home.where"))
for _, path, key, _ in navigation.PAGES[1:]:
    layout.page_link(path, key, t(lang, f"page.{key}.title"), ":material/arrow_forward:")
    st.caption(t(lang, f"home.link.{key}"))
st.divider()
releases = t(lang, "schedule.list_separator").join(profile.matched for profile in PROFILES.values())
st.caption(t(lang, "home.truth", releases=releases))
