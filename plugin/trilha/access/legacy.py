"""Units stored before the visibility rules (issue 8), made valid without widening access.

Earlier workspaces allowed ``visibility: team`` and ``org`` without an ``org_id`` (the
organisation was often written as ``owner_id``). Such a unit can no longer be loaded, so the
workspace rewrites it once, when it opens, to what only its owner may see: ``private``, owned by
its ``owner_id`` (or by :data:`UNCLASSIFIED`, nobody). Nothing becomes more visible; re-ingesting
the document with ``org_id`` / ``project_id`` / ``acl`` set restores the intended audience.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from trilha.types import TextUnit

#: Bumped when stored units need rewriting for new access rules.
ACCESS_VERSION = "1"
#: Owner given to a legacy unit that had none: no principal is this user.
UNCLASSIFIED = "unclassified\x00owner"


def fail_closed(body: str) -> str:
    """``body`` unchanged when it is a valid unit, else the private, owner-only version."""
    try:
        TextUnit.model_validate_json(body)
        return body
    except ValidationError:
        pass
    data = json.loads(body)
    data["visibility"] = "private"
    data["owner_id"] = data.get("owner_id") or UNCLASSIFIED
    data["acl"] = [
        a for a in data.get("acl") or [] if isinstance(a, str) and a.strip() and a != "*"
    ]
    return json.dumps(data, ensure_ascii=False)
