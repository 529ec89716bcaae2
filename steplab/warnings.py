"""Coded warnings for every edge case that bites, each with what happens and what to change, in zh and en."""

from __future__ import annotations

from dataclasses import dataclass

from steplab.events import events, interval
from steplab.i18n import Text, fmt_float, fmt_int
from steplab.plan import Plan


@dataclass(frozen=True)
class Warning:
    """One edge case this plan runs into."""

    code: str
    text: Text  # what happens, with this plan's numbers
    fix: Text  # what to change

    def message(self, lang: str) -> str:
        return self.text.get(lang)


def _partial_group(plan: Plan) -> list[Warning]:
    ga = plan.setup.gradient_accumulation_steps
    length = plan.micro_batches_per_epoch
    rest = length % ga
    if not rest or plan.profile.running_count or plan.optimizer_steps == 0:
        return []
    return [Warning(
        "partial_accumulation_group",
        Text(
            f"每轮 {fmt_int(length)} 个小批次不能被梯度累积 {ga} 整除:每轮最后一次更新只用 {rest} 个小批次"
            f"({fmt_int(length)} = {fmt_int(length // ga)} × {ga} + {rest})。",
            f"{fmt_int(length)} micro-batches per epoch do not divide by the accumulation of {ga}: the last update of every "
            f"epoch uses only {rest} micro-batch{'es' if rest > 1 else ''} ({fmt_int(length)} = {fmt_int(length // ga)} × {ga} + {rest}).",
        ),
        Text(
            "若希望每次更新的样本数相同,调整样本数、批大小或累积次数,使每轮小批次数能被累积次数整除。",
            "For equal updates, choose samples, batch size or accumulation so that the micro-batches per epoch divide evenly.",
        ),
    )]


def _straddling(plan: Plan) -> list[Warning]:
    ga = plan.setup.gradient_accumulation_steps
    if not plan.profile.running_count or plan.micro_batches_per_epoch % ga == 0 or plan.micro_batches_per_epoch <= ga:
        return []
    return [Warning(
        "groups_straddle_epochs",
        Text(
            f"这个版本的累积计数跨轮不清零:上一轮剩下的小批次与下一轮开头的凑成 {ga} 个再更新,"
            "一次更新可能混有两轮的数据。",
            f"This release never resets its accumulation count: the micro-batches left at the end of an epoch are "
            f"completed with the first ones of the next epoch, so one update of {ga} micro-batches can span two epochs.",
        ),
        Text("新版本(≥ 4.47)在每轮末尾单独更新一次;升级即可得到按轮对齐的更新。",
             "Releases from 4.47 on step at every epoch end; upgrading aligns updates with epochs."),
    )]


def _skipped(plan: Plan) -> list[Warning]:
    missing = plan.micro_batches_per_epoch - plan.fetched_per_epoch
    if missing <= 0:
        return []
    ga = plan.setup.gradient_accumulation_steps
    return [Warning(
        "micro_batches_never_drawn",
        Text(
            f"此版本按「样本数 % 累积次数」({fmt_int(plan.setup.num_samples)} % {ga})决定每轮最后一组取几个小批次,"
            f"于是每轮有 {fmt_int(missing)} 个小批次从未被取出训练。",
            f"This release sizes the last group of each epoch by samples % accumulation "
            f"({fmt_int(plan.setup.num_samples)} % {ga}), so {fmt_int(missing)} micro-batch{'es' if missing > 1 else ''} of every "
            "epoch are never drawn.",
        ),
        Text("这是 4.46–4.51 的缺陷(transformers #37777),4.52 起已修复。",
             "A bug of 4.46–4.51 (transformers #37777), fixed in 4.52."),
    )]


def _oversized(plan: Plan) -> list[Warning]:
    ga = plan.setup.gradient_accumulation_steps
    biggest = plan.largest_step
    if biggest <= ga:
        return []
    return [Warning(
        "update_larger_than_accumulation",
        Text(
            f"有的更新包含 {biggest} 个小批次,多于梯度累积的 {ga}:上一轮末尾没更新的梯度被带进了下一轮的第一次更新。",
            f"Some updates hold {biggest} micro-batches, more than the accumulation of {ga}: gradients left "
            "unstepped at an epoch end are carried into the first update of the next epoch.",
        ),
        Text("这是旧版本的缺陷;4.52 起每轮末尾都会单独更新。", "An old-release bug; from 4.52 on every epoch ends with its own update."),
    )]


def _no_updates(plan: Plan) -> list[Warning]:
    if plan.optimizer_steps > 0 or plan.max_steps == 0:
        return []
    return [Warning(
        "no_updates",
        Text(
            f"日志会显示总步数 {fmt_int(plan.max_steps)},但整个训练一次参数更新也不会发生,也不会有任何警告。",
            f"The log says {fmt_int(plan.max_steps)} total optimization steps, but not a single update happens in the "
            "whole run, and nothing warns about it.",
        ),
        Text("增加样本、减小批大小或累积次数,或升级到 4.52 以上。",
             "Add samples, lower the batch size or the accumulation, or upgrade to 4.52 or later."),
    )]


def _stops_early(plan: Plan) -> list[Warning]:
    wanted = plan.setup.num_train_epochs
    if plan.setup.uses_max_steps or plan.optimizer_steps == 0 or plan.final_epoch >= wanted - 1e-9:
        return []
    return [Warning(
        "stops_before_last_epoch_ends",
        Text(
            f"总步数按每轮 {fmt_int(plan.num_update_steps_per_epoch)} 步计算,但每轮实际更新更多次,"
            f"所以训练在第 {fmt_float(plan.final_epoch, 3)} 轮就达到 {fmt_int(plan.max_steps)} 步并停止,"
            f"而不是 {fmt_float(wanted)} 轮。",
            f"The total was sized with {fmt_int(plan.num_update_steps_per_epoch)} updates per epoch but each epoch takes more, "
            f"so training reaches {fmt_int(plan.max_steps)} steps and stops at epoch {fmt_float(plan.final_epoch, 3)}, "
            f"not {fmt_float(wanted)}.",
        ),
        Text("4.47–4.51 的已知问题(transformers #36297);4.52 起向上取整,两者一致。",
             "A known issue of 4.47–4.51 (transformers #36297); from 4.52 the count rounds up and both agree."),
    )] if plan.setup.num_train_epochs == int(plan.setup.num_train_epochs) else []


def _max_steps(plan: Plan) -> list[Warning]:
    if not plan.setup.uses_max_steps or plan.optimizer_steps == 0:
        return []
    epochs = plan.setup.num_train_epochs
    reached = plan.final_epoch
    if reached < epochs - 1e-9:
        return [Warning(
            "max_steps_cuts_epochs",
            Text(f"max_steps = {fmt_int(plan.max_steps)} 优先于 num_train_epochs:训练在第 {fmt_float(reached, 3)} 轮停止,"
                 f"而不是 {fmt_float(epochs)} 轮。",
                 f"max_steps = {fmt_int(plan.max_steps)} overrides num_train_epochs: training stops at epoch "
                 f"{fmt_float(reached, 3)} instead of {fmt_float(epochs)}."),
            Text("想按轮数训练就把 max_steps 设为 -1。", "Set max_steps to -1 to train by epochs."),
        )]
    if reached > epochs + 1e-9:
        return [Warning(
            "max_steps_extends_epochs",
            Text(f"max_steps = {fmt_int(plan.max_steps)} 优先于 num_train_epochs:训练会跑到第 {fmt_float(reached, 3)} 轮,"
                 f"多于 {fmt_float(epochs)} 轮,数据会被重复打乱再训练。",
                 f"max_steps = {fmt_int(plan.max_steps)} overrides num_train_epochs: training runs to epoch "
                 f"{fmt_float(reached, 3)}, beyond {fmt_float(epochs)}, reshuffling the data each time."),
            Text("想按轮数训练就把 max_steps 设为 -1。", "Set max_steps to -1 to train by epochs."),
        )]
    return []


def _data_loss(plan: Plan) -> list[Warning]:
    found: list[Warning] = []
    epoch = plan.epoch
    setup = plan.setup
    if epoch.micro_batches == 0:
        found.append(Warning(
            "empty_dataloader",
            Text(f"dataloader_drop_last 丢掉了不足一批的全部 {fmt_int(setup.num_samples)} 个样本:每轮 0 个小批次。",
                 f"dataloader_drop_last drops all {fmt_int(setup.num_samples)} samples (less than one batch): 0 micro-batches per epoch."),
            Text("关闭 dataloader_drop_last 或减小批大小。", "Turn dataloader_drop_last off or lower the batch size."),
        ))
    elif epoch.dropped:
        found.append(Warning(
            "samples_dropped",
            Text(f"dataloader_drop_last:每轮有 {fmt_int(epoch.dropped)} 个样本凑不满一批而被跳过(每轮重新打乱,跳过的样本不同)。",
                 f"dataloader_drop_last: {fmt_int(epoch.dropped)} samples per epoch do not fill a batch and are skipped "
                 "(different ones each epoch, as the order is reshuffled)."),
            Text("关闭 dataloader_drop_last,或让样本数能被 批大小 × GPU 数 整除。",
                 "Turn dataloader_drop_last off, or make the samples divisible by batch × GPUs."),
        ))
    if epoch.duplicated:
        found.append(Warning(
            "samples_duplicated",
            Text(f"{setup.world_size} 个进程要处理同样多的小批次:每轮有 {fmt_int(epoch.duplicated)} 个样本被重复抽取来补齐最后一批。",
                 f"All {setup.world_size} processes run the same number of micro-batches: {fmt_int(epoch.duplicated)} samples "
                 "per epoch are drawn twice to fill the last batches."),
            Text("让样本数能被 批大小 × GPU 数 整除,或打开 dataloader_drop_last。",
                 "Make the samples divisible by batch × GPUs, or turn dataloader_drop_last on."),
        ))
    if 0 < setup.num_samples < setup.per_device_train_batch_size * setup.world_size:
        found.append(Warning(
            "batch_larger_than_dataset",
            Text(f"一批要 {fmt_int(setup.per_device_train_batch_size * setup.world_size)} 个样本(全部 GPU),"
                 f"但只有 {fmt_int(setup.num_samples)} 个样本。",
                 f"One batch across all GPUs wants {fmt_int(setup.per_device_train_batch_size * setup.world_size)} samples, "
                 f"but there are only {fmt_int(setup.num_samples)}."),
            Text("减小批大小或 GPU 数,或增加样本。", "Lower the batch size or GPUs, or add samples."),
        ))
    if epoch.limited_from is not None:
        found.append(Warning(
            "limit_train_batches",
            Text(f"limit_train_batches 把每轮的 {fmt_int(epoch.limited_from)} 个小批次截为 {fmt_int(epoch.micro_batches)} 个。",
                 f"limit_train_batches cuts each epoch from {fmt_int(epoch.limited_from)} to {fmt_int(epoch.micro_batches)} micro-batches."),
            Text("去掉 limit_train_batches 即用全部数据。", "Remove limit_train_batches to use all the data."),
        ))
    return found


def _warmup(plan: Plan) -> list[Warning]:
    found: list[Warning] = []
    setup = plan.setup
    if plan.warmup_steps >= plan.max_steps > 0 and setup.lr_scheduler_type != "constant":
        found.append(Warning(
            "warmup_longer_than_run",
            Text(f"预热 {fmt_int(plan.warmup_steps)} 步不短于总步数 {fmt_int(plan.max_steps)}:学习率还没升到峰值训练就结束了。",
                 f"Warmup of {fmt_int(plan.warmup_steps)} steps is not shorter than the {fmt_int(plan.max_steps)} total steps: "
                 "the learning rate never reaches its peak."),
            Text("把预热设为总步数的一小部分,例如 warmup_steps: 0.1(5.x)或 warmup_ratio: 0.1(4.x)。",
                 "Make warmup a small part of the run, e.g. warmup_steps: 0.1 (5.x) or warmup_ratio: 0.1 (4.x)."),
        ))
    if setup.lr_scheduler_type == "constant" and plan.warmup_steps > 0:
        found.append(Warning(
            "constant_ignores_warmup",
            Text(f"lr_scheduler_type 为 constant 时 HF Trainer 不做预热:设定的 {fmt_int(plan.warmup_steps)} 步预热没有作用,"
                 "第一步就用满学习率。",
                 f"With lr_scheduler_type constant the HF Trainer does no warmup: the {fmt_int(plan.warmup_steps)} warmup "
                 "steps have no effect and the first update uses the full learning rate."),
            Text("需要预热就改用 constant_with_warmup。", "Use constant_with_warmup if you want warmup."),
        ))
    if plan.profile.warmup_steps_ratio and setup.warmup_ratio is not None and plan.profile.framework == "transformers":
        found.append(Warning(
            "warmup_ratio_deprecated",
            Text("warmup_ratio 在 transformers 5.0–5.8(LLaMA-Factory 固定的版本)中是已弃用的别名,会被复制到 warmup_steps"
                 "(同时设置时它优先);最新的 5.x 直接报错:TypeError: TrainingArguments.__init__() got an unexpected "
                 "keyword argument 'warmup_ratio'。",
                 "warmup_ratio is a deprecated alias in transformers 5.0–5.8 (the range LLaMA-Factory pins): it is copied "
                 "into warmup_steps (and wins if both are set). The newest 5.x releases refuse it: TypeError: "
                 "TrainingArguments.__init__() got an unexpected keyword argument 'warmup_ratio'."),
            Text(f"改写为 warmup_steps: {fmt_float(setup.warmup_ratio)}(小于 1 的 warmup_steps 表示比例)。",
                 f"Write warmup_steps: {fmt_float(setup.warmup_ratio)} instead (a warmup_steps below 1 is a ratio)."),
        ))
        if setup.warmup_steps:
            found.append(Warning(
                "warmup_ratio_overrides_steps",
                Text(f"同时设置了 warmup_steps 与 warmup_ratio:5.0–5.8 中比例覆盖了 warmup_steps = {fmt_float(setup.warmup_steps)}。",
                     f"Both warmup_steps and warmup_ratio are set: in 5.0–5.8 the ratio overrides warmup_steps = "
                     f"{fmt_float(setup.warmup_steps)}."),
                Text("只保留其中一个。", "Keep only one of them."),
            ))
    if not plan.profile.warmup_steps_ratio and setup.warmup_steps and setup.warmup_ratio:
        found.append(Warning(
            "warmup_steps_override_ratio",
            Text(f"同时设置了 warmup_steps 与 warmup_ratio:4.x 中 warmup_steps = {fmt_int(int(setup.warmup_steps))} 优先,比例被忽略。",
                 f"Both warmup_steps and warmup_ratio are set: in 4.x warmup_steps = {fmt_int(int(setup.warmup_steps))} "
                 "wins and the ratio is ignored."),
            Text("只保留其中一个。", "Keep only one of them."),
        ))
    value = setup.warmup_ratio if setup.warmup_ratio is not None else setup.warmup_steps
    if plan.profile.warmup_steps_ratio and value == 1:
        found.append(Warning(
            "warmup_one_is_one_step",
            Text("5.x 中 warmup 值 1(或 1.0)表示 1 步,而不是 100%。", "In 5.x a warmup of 1 (or 1.0) means one step, not 100%."),
            Text("要按比例预热,用小于 1 的值,例如 0.1。", "For a ratio use a value below 1, such as 0.1."),
        ))
    return found


def _intervals(plan: Plan) -> list[Warning]:
    found: list[Warning] = []
    if plan.profile.framework != "transformers" or plan.optimizer_steps == 0:
        return found
    names = {"eval": ("评估", "evaluation"), "save": ("保存检查点", "checkpoint"), "log": ("记录日志", "logging")}
    for kind, (zh, en) in names.items():
        setting = "logging" if kind == "log" else kind
        if getattr(plan.setup, f"{setting}_strategy") != "steps":
            continue
        every = interval(plan, kind)
        if not every or every <= plan.optimizer_steps:
            continue
        happened = events(plan, kind).steps()
        after = (f"只在最后一步 {fmt_int(happened[-1])} {zh}" if happened else f"整个训练不会{zh}")
        after_en = (f"the only {en} is the one at the last step {fmt_int(happened[-1])}" if happened
                    else f"there is no {en} at all")
        found.append(Warning(
            f"{kind}_interval_longer_than_run",
            Text(f"{setting}_steps = {fmt_int(every)} 大于训练的 {fmt_int(plan.optimizer_steps)} 步:{after}。",
                 f"{setting}_steps = {fmt_int(every)} is longer than the {fmt_int(plan.optimizer_steps)}-step run: {after_en}."),
            Text(f"把 {setting}_steps 设为小于总步数的值,或用 0.1 这样的比例。",
                 f"Set {setting}_steps below the total, or use a ratio such as 0.1."),
        ))
    if (plan.setup.eval_strategy == "steps" and not plan.profile.final_eval and plan.optimizer_steps == plan.max_steps
            and (every := interval(plan, "eval")) and plan.max_steps % every and every <= plan.max_steps):
        found.append(Warning(
            "last_step_not_evaluated",
            Text(f"最后一步 {fmt_int(plan.max_steps)} 不是 eval_steps = {fmt_int(every)} 的倍数:这个版本不会在训练结束时再评估一次(5.x 会)。",
                 f"The last step {fmt_int(plan.max_steps)} is not a multiple of eval_steps = {fmt_int(every)}: this release does "
                 "not evaluate again at the end (5.x does)."),
            Text("让总步数是 eval_steps 的倍数,或训练后单独运行一次评估。",
                 "Make the total a multiple of eval_steps, or run one evaluation after training."),
        ))
    return found


def _framework(plan: Plan) -> list[Warning]:
    if plan.profile.framework == "lightning":
        return [Warning(
            "lightning_events_not_modelled",
            Text("Lightning 用回调(val_check_interval、ModelCheckpoint、log_every_n_steps)安排评估、保存与日志,"
                 "这里不计算它们。",
                 "Lightning schedules evaluation, checkpoints and logging with callbacks (val_check_interval, "
                 "ModelCheckpoint, log_every_n_steps); they are not computed here."),
            Text("在 HF 版本中查看评估与保存时机。", "Pick an HF release to see evaluation and checkpoint steps."),
        )]
    if plan.setup.lr_scheduler_type == "reduce_lr_on_plateau":
        return [Warning(
            "metric_driven_schedule",
            Text("reduce_lr_on_plateau 依据每次评估的验证损失调整学习率,无法事先画出曲线;评估前学习率保持不变。",
                 "reduce_lr_on_plateau changes the learning rate from each evaluation's loss, so no curve exists in "
                 "advance; until an evaluation the learning rate stays as set."),
            Text("想预先看到曲线,选择 linear 或 cosine 等按步数规划的调度器。",
                 "Choose a step-based scheduler such as linear or cosine to see a planned curve."),
        )]
    return []


CHECKS = (_data_loss, _partial_group, _straddling, _skipped, _oversized, _no_updates, _stops_early, _max_steps,
          _warmup, _intervals, _framework)


def plan_warnings(plan: Plan) -> list[Warning]:
    """Every warning that applies to this plan, in a stable order."""
    return [warning for check in CHECKS for warning in check(plan)]
