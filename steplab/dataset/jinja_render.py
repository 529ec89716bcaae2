"""Render a tokenizer's Jinja chat template on fixed conversations, in a child process of its own.

Run as a script (`python jinja_render.py`), never imported by StepLab: it reads one JSON request on stdin,
`{"template": <Jinja source>, "variables": {name: text}, "probes": [[messages, add_generation_prompt], ...],
"cpu_seconds": <its CPU time cap>}`,
and writes `{"rendered": [text, ...]}` or `{"error": <what failed>}`. The template runs in Jinja's immutable
sandbox set up as `transformers` sets it up for `apply_chat_template` (trim_blocks, lstrip_blocks, loop
controls, the `generation` tag, `tojson`, `raise_exception`, `strftime_now`); the process caps its own
memory and CPU time, so a hostile template can neither reach the machine nor hold it.
"""

from __future__ import annotations

import json
import resource
import sys
from datetime import datetime

MEMORY_BYTES = 1 << 30


def _environment():
    import jinja2
    from jinja2.ext import Extension, loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Generation(Extension):
        """`{% generation %}…{% endgeneration %}`: transformers marks assistant text with it; the text is kept."""

        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_keep"), [], [], body).set_lineno(lineno)

        def _keep(self, caller):
            return caller()

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                extensions=[Generation, loopcontrols])
    environment.filters["tojson"] = tojson
    environment.globals["raise_exception"] = raise_exception
    environment.globals["strftime_now"] = lambda format: datetime.now().strftime(format)
    return environment


def main() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    request = json.loads(sys.stdin.read())
    resource.setrlimit(resource.RLIMIT_CPU, (request["cpu_seconds"], request["cpu_seconds"]))
    try:
        template = _environment().from_string(request["template"])
        rendered = [template.render(messages=messages, tools=None, documents=None,
                                    add_generation_prompt=generation, **request["variables"])
                    for messages, generation in request["probes"]]
        answer = {"rendered": rendered}
    except Exception as error:  # noqa: BLE001 - every failure of the template is the answer
        answer = {"error": f"{type(error).__name__}: {error}"[:500]}
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
