"""The environment tool commands and hooks run in: earshot's own, minus the provider credentials;
and `scrub`, which masks credentials in error text shown to the model or the user.

The model can run `env` (or `echo $OPENAI_API_KEY`) and whatever it reads ends up in the
transcript and at the vendor. So every variable a built-in provider reads a key or bearer token
from (`providers.registry`) is removed before a command or hook starts. Paths to credential files
(`GOOGLE_APPLICATION_CREDENTIALS`) are kept: commands such as `gcloud` need them and they are not
secrets themselves. A user who needs a key in a command sets it in the command itself.

General-purpose credentials that some provider also happens to read (`GITHUB_TOKEN` for GitHub
Models, `HF_TOKEN` for Hugging Face) are kept: `gh`, git credential helpers and `huggingface-cli`
need them in ordinary coding work. They are still masked in error text by `scrub`.

A provider the user defines reads its key from the variable its `apiKeyEnv` names; those names are
added with `add_credential_variables` when a session is assembled from the settings, and are
removed and masked like the built-in ones from then on, for every session of the process (a name
scrubbed for one directory's settings is scrubbed for all: removing too much costs a command a
variable it should not need, removing too little costs a key).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from functools import lru_cache

from providers.errors import redact
from providers.registry import all_providers

_ALWAYS = frozenset({"ANTHROPIC_AUTH_TOKEN"})
_KEPT_FOR_TOOLS = frozenset({"GITHUB_TOKEN", "GH_TOKEN", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"})
_configured: set[str] = set()
"""Upper-case `apiKeyEnv` names from the settings of the sessions assembled so far."""


@lru_cache(maxsize=1)
def _builtin_credential_variables() -> frozenset[str]:
    names = set(_ALWAYS)
    for spec in all_providers():
        names.update(spec.env)
        names.update(spec.token_env)
    return frozenset(name.upper() for name in names)


def credential_variables() -> frozenset[str]:
    """Upper-case names of the variables holding provider keys and tokens: the built-in
    providers' and every `apiKeyEnv` added with `add_credential_variables`."""
    builtin = _builtin_credential_variables()
    return builtin | _configured if _configured else builtin


def add_credential_variables(names: Iterable[str]) -> None:
    """Treat `names` (a user-defined provider's `apiKeyEnv`) as provider keys from now on."""
    _configured.update(name.upper() for name in names if name.strip())


def tool_secret_variables() -> frozenset[str]:
    """The variables removed from a command's or hook's environment."""
    return credential_variables() - _KEPT_FOR_TOOLS


def tool_environment(
    base: Mapping[str, str] | None = None, *, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`base` (default: this process's environment) without the credential variables, then
    `extra` on top (what the caller sets on purpose is kept)."""
    secrets = tool_secret_variables()
    source = os.environ if base is None else base
    environment = {key: value for key, value in source.items() if key.upper() not in secrets}
    if extra:
        environment.update(extra)
    return environment


def credential_values(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of the credential variables that are set (the keys the models were built
    with, whatever their shape)."""
    secrets = credential_variables()
    source = os.environ if environ is None else environ
    return tuple(value for key, value in source.items() if key.upper() in secrets and value)


def scrub(text: str) -> str:
    """`text` with every configured key (from the environment) and anything shaped like a key
    masked: for exception text that becomes a tool result or the message a turn ends with."""
    return redact(text, credential_values())
