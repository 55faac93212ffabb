"""The HTTP service (``trilha serve``): seeds 001–003's endpoints over the Python API, API keys
mapped to tenants and principals, health and Prometheus metrics. Needs ``trilha[server]``."""

from trilha.server.app import create_app
from trilha.server.config import ServiceConfig, key_digest, load_service_config
from trilha.server.projects import Projects

__all__ = ["Projects", "ServiceConfig", "create_app", "key_digest", "load_service_config"]
