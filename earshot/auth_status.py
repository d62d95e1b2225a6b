"""What `auth/status` says (ACP, unstable; `acp_server.auth_status` speaks the protocol): whether
a session can start without the user signing in, and the credentials earshot found.

The state is the default model's: `authenticated` when its provider's key (or token) is found,
`not_required` when its provider needs none (a local server, the scripted test provider),
`unauthenticated` when none is found (or its provider is turned off). Each provider with
credentials is an account, labelled with the provider's name, `active` for the default model's
provider, with where the key comes from in `_meta.earshot.source` (a variable's or a setting's
name, never a value).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from earshot.compose import Composition


def auth_status(composition: Composition) -> dict[str, Any]:
    from providers.registry import provider_spec, resolve_endpoint, split_model_name

    model = composition.default_model().name
    try:
        active, _ = split_model_name(model)
    except ValueError:
        active = ""
    accounts: list[dict[str, Any]] = []
    for provider in composition.credentialed():
        spec = provider_spec(provider)
        accounts.append(
            {
                "label": spec.name if spec is not None else provider,
                "active": provider == active,
                "_meta": {
                    "earshot": {
                        "provider": provider,
                        "source": composition.credential_source(provider),
                    }
                },
            }
        )
    if composition.check_credentials(model) is not None:
        state = "unauthenticated"
    else:
        endpoint = resolve_endpoint(active, composition.user_providers, composition.environ)
        keyed = endpoint.api_key is not None or bool(endpoint.headers)
        state = "authenticated" if keyed else "not_required"
    return {"state": state, "accounts": accounts}


__all__ = ["auth_status"]
