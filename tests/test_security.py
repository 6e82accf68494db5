"""Security hygiene: server settings, no user text rendered as HTML, no outbound network code."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APP_FILES = sorted(
    [ROOT / "app.py", *(ROOT / "app_pages").glob("*.py"), *(ROOT / "sdlab_ui").rglob("*.py")]
)
MODEL_FILES = sorted((ROOT / "sdlab_model").glob("*.py"))
# Modules that open connections. The app serves a page and computes locally; it never calls out.
NETWORK_MODULES = (
    "requests",
    "httpx",
    "aiohttp",
    "urllib3",
    "urllib.request",
    "http.client",
    "socket",
    "websocket",
    "websockets",
    "ftplib",
    "smtplib",
    "telnetlib",
    "xmlrpc.client",
)
# Calls that render their argument as raw HTML whatever the keywords say.
HTML_CALLS = {"html"}  # st.html, components.html, components.v1.html


def _config() -> dict:
    return tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))


def test_usage_statistics_are_off():
    browser = _config().get("browser", {})
    assert browser.get("gatherUsageStats") is False, (
        ".streamlit/config.toml must set [browser] gatherUsageStats = false: usage stats call out"
    )


def test_xsrf_protection_is_not_disabled():
    server = _config().get("server", {})
    assert server.get("enableXsrfProtection", True) is True, (
        ".streamlit/config.toml must not disable [server] enableXsrfProtection (uploads need it)"
    )


def test_uploads_are_small():
    # A scenario file is at most 64 KB; Streamlit's default upload limit is 200 MB of memory.
    size_mb = _config().get("server", {}).get("maxUploadSize", 200)
    assert size_mb <= 1, f"[server] maxUploadSize should be at most 1 MB, is {size_mb}"


def test_a_closed_sessions_state_and_uploads_go_within_30_s():
    server = _config()["server"]
    assert server.get("disconnectedSessionTTL", 120) <= 30, (
        "a closed session's state and uploads stay 120 s by default (issue 26)"
    )


def test_no_full_garbage_collection_after_every_run():
    # A full collection per rerun costs ~90 ms of server CPU here (see .streamlit/config.toml).
    runner = _config().get("runner", {})
    assert runner.get("postScriptGC", True) is False, (
        ".streamlit/config.toml should set [runner] postScriptGC = false"
    )


def test_inbound_messages_are_small():
    # Streamlit buffers a websocket frame up to this size before it refuses it: six 190 MB frames
    # took the server from 234 MB to 1.34 GB (issue 13), and the event loop's and the canary
    # field's work grows with a forged frame's size (issue 26). Uploads come over HTTP, not the
    # websocket; the largest page message, a Heatmaps page, is ~0.2 MB.
    size_mb = _config().get("server", {}).get("maxMessageSize", 200)
    assert size_mb <= 2, f"[server] maxMessageSize should be at most 2 MB, is {size_mb}"
    assert size_mb >= 1, f"[server] maxMessageSize {size_mb} MB would refuse the app's own pages"


def test_errors_do_not_show_tracebacks():
    # "full" (the default) shows a visitor the exception message and a traceback with server
    # paths; "none" shows a generic message and logs the details on the server only.
    details = _config().get("client", {}).get("showErrorDetails", "full")
    assert details == "none", f'[client] showErrorDetails should be "none", is {details!r}'


def test_start_does_not_look_up_the_external_ip():
    # A headless start prints the external URL, found by calling checkip.amazonaws.com.
    logger = _config().get("logger", {})
    assert logger.get("hideWelcomeMessage") is True, (
        ".streamlit/config.toml should set [logger] hideWelcomeMessage = true"
    )


def test_every_config_option_exists_in_the_installed_streamlit():
    # A misspelt or renamed option is silently ignored: the setting would look made and not be.
    from streamlit import config

    def dotted(table: dict, prefix: str = ""):
        # Nested tables ([theme.light], [theme.dark]) name their options with both parts.
        for name, value in table.items():
            if isinstance(value, dict):
                yield from dotted(value, f"{prefix}{name}.")
            else:
                yield f"{prefix}{name}"

    unknown = [name for name in dotted(_config()) if name not in config.get_config_options()]
    assert not unknown, f".streamlit/config.toml sets options Streamlit does not have: {unknown}"
    assert config.get_config_options()["client.showErrorDetails"].default_val == "full", (
        'this Streamlit no longer defaults to "full" error details: recheck the chosen value'
    )


TRUSTED_HTML = {
    ("sdlab_ui/diagram.py", "draw_server_diagram"): "Graphviz's SVG of the model's own labels, "
    "which diagram.diagram_svg refuses if it holds a script, an event handler or a foreign "
    "object, and the legend, the model's literal text",
    ("sdlab_ui/lab/sections.py", "breakdown"): "an SVG figures.latency_breakdown_svg draws from "
    "numbers, every text in it escaped",
    ("sdlab_ui/lab/headline.py", "sticky_summary"): "a literal empty marker and the summary line, "
    "Markdown of numbers the page computes",
    ("sdlab_ui/lab/style.py", "lab_header"): "literal text: the Lab's stylesheet, title and lead",
    ("sdlab_ui/lab/headline.py", "headline"): "the headline numbers: labels and values the page "
    "computes, every text escaped by _metric_html and the table's cells; the literal header",
}
"""Functions that may render computed HTML, each with the reason it is safe."""


def _html_problems(source: str, filename: str) -> list[str]:
    """Calls that render non-literal text as HTML, as 'file:line: call'."""
    problems = []
    tree = ast.parse(source, filename)
    trusted = {
        id(call)
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef) and (filename, function.name) in TRUSTED_HTML
        for call in ast.walk(function)
    }
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or id(node) in trusted:
            continue
        name = (
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        )
        unsafe = next((k for k in node.keywords if k.arg == "unsafe_allow_html"), None)
        renders_html = name in HTML_CALLS or (
            unsafe is not None
            and not (isinstance(unsafe.value, ast.Constant) and unsafe.value.value is False)
        )
        if not renders_html:
            continue
        bodies = node.args[:1] + [k.value for k in node.keywords if k.arg == "body"]
        if not bodies or not all(
            isinstance(body, ast.Constant) and isinstance(body.value, str) for body in bodies
        ):
            problems.append(f"{filename}:{node.lineno}: {ast.unparse(node)[:80]}")
    return problems


@pytest.mark.parametrize("path", APP_FILES + MODEL_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_html_is_rendered_only_from_literal_strings(path):
    problems = _html_problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not problems, (
        "HTML may only be rendered from a literal string (never from data or user text):\n"
        + "\n".join(problems)
    )


def test_the_html_check_catches_what_it_guards():
    risky = (
        "st.markdown(f'<b>{name}</b>', unsafe_allow_html=True)\n"
        "st.markdown(text, unsafe_allow_html=ALLOW)\n"
        "st.html(user_text)\n"
        "components.html(body=page)\n"
    )
    safe = (
        "st.markdown('<br>', unsafe_allow_html=True)\n"
        "st.markdown(text)\n"
        "st.markdown(text, unsafe_allow_html=False)\n"
        "st.html('<hr>')\n"
    )
    assert len(_html_problems(risky, "risky.py")) == 4, "every risky call must be reported"
    trusted = "def draw_server_diagram(svg):\n    st.markdown(svg, unsafe_allow_html=True)\n"
    assert _html_problems(trusted, "sdlab_ui/diagram.py") == [], "a trusted function was reported"
    assert len(_html_problems(trusted, "sdlab_ui/other.py")) == 1, "trust is per file and function"
    assert _html_problems(safe, "safe.py") == [], "literal or escaped text must pass"


def _imported_modules(source: str, filename: str) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
    return modules


def _network_imports(source: str, filename: str) -> list[str]:
    return sorted(
        module
        for module in _imported_modules(source, filename)
        if any(module == net or module.startswith(net + ".") for net in NETWORK_MODULES)
    )


SOCKET_OPTIONS_ONLY = {
    "sdlab_ui/server/sockets.py": "sets TCP_NODELAY on the server's own connections and opens none"
}
"""Files that may import ``socket`` to tune the server's existing sockets, never to call out."""
_CALLING_OUT = {"connect", "connect_ex", "create_connection", "getaddrinfo", "sendto", "bind"}


def _socket_calls_out(source: str, filename: str) -> list[str]:
    """Uses of a socket call that could reach another host (or open a new endpoint)."""
    return sorted(
        node.attr
        for node in ast.walk(ast.parse(source, filename))
        if isinstance(node, ast.Attribute) and node.attr in _CALLING_OUT
    )


@pytest.mark.parametrize("path", APP_FILES + MODEL_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_network_client_is_imported(path):
    source, name = path.read_text(encoding="utf-8"), str(path.relative_to(ROOT))
    found = _network_imports(source, name)
    if name in SOCKET_OPTIONS_ONLY:
        assert found == ["socket"], f"{name} may import socket alone, not {found}"
        calls = _socket_calls_out(source, name)
        assert not calls, f"{name} may only tune the server's sockets, yet uses {calls}"
        return
    assert not found, f"{name} imports network code {found}: the app never calls out"


def test_the_socket_options_check_catches_a_call_out():
    assert _socket_calls_out("sock.setsockopt(1, 2, 3)\n", "ok.py") == [], "an option was flagged"
    assert _socket_calls_out("s.connect(('evil.example', 80))\n", "x.py") == ["connect"], (
        "a connect went unnoticed"
    )


def test_the_network_check_catches_what_it_guards():
    source = (
        "import requests\nfrom urllib import request\nimport socket as s\nfrom http import client\n"
    )
    assert _network_imports(source, "x.py") == [
        "http.client",
        "requests",
        "socket",
        "urllib.request",
    ], "every network import form must be reported"
    assert _network_imports("import urllib.parse\nimport json\n", "y.py") == [], (
        "urllib.parse only parses text; it must pass"
    )


def test_the_checks_see_the_app():
    assert (ROOT / "app.py") in APP_FILES and len(APP_FILES) > 3, (
        f"the security checks must walk the app's files, found {APP_FILES}"
    )
    assert len(MODEL_FILES) > 3, f"the security checks must walk the model, found {MODEL_FILES}"


def _unbounded_caches(source: str, filename: str) -> list[str]:
    """Cache decorators without a size bound, as 'file:line: decorator'."""
    problems = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            target = call.func if call else decorator
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            keywords = {k.arg: k.value for k in call.keywords} if call else {}
            if name in {"cache_data", "cache_resource"}:
                bound = keywords.get("max_entries")
            elif name in {"lru_cache", "shared_cache"}:
                bound = keywords.get("maxsize", call.args[0] if call and call.args else None)
            elif name == "cache":  # functools.cache never evicts
                bound = None
            else:
                continue
            if not (isinstance(bound, ast.Constant) and isinstance(bound.value, int)):
                problems.append(f"{filename}:{decorator.lineno}: {ast.unparse(decorator)}")
    return problems


@pytest.mark.parametrize("path", APP_FILES + MODEL_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_cache_has_a_size_bound(path):
    problems = _unbounded_caches(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not problems, (
        "every cache needs a literal size bound (max_entries / maxsize), or a visitor can make "
        "the server hold unbounded results:\n" + "\n".join(problems)
    )


def test_the_cache_check_catches_what_it_guards():
    risky = (
        "@st.cache_data\ndef a(): ...\n"
        "@st.cache_resource(ttl=60)\ndef b(): ...\n"
        "@lru_cache(maxsize=None)\ndef c(): ...\n"
        "@functools.cache\ndef d(): ...\n"
        "@lru_cache\ndef e(): ...\n"
        "@shared_cache\ndef f(): ...\n"
    )
    safe = (
        "@st.cache_data(max_entries=32)\ndef a(): ...\n"
        "@lru_cache(maxsize=256)\ndef b(): ...\n"
        "@lru_cache(64)\ndef c(): ...\n"
        "@shared_cache(maxsize=64)\ndef d(): ...\n"
    )
    assert len(_unbounded_caches(risky, "risky.py")) == 6, "every unbounded cache must be reported"
    assert _unbounded_caches(safe, "safe.py") == [], "bounded caches must pass"


def _hosting_section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("### What a public deployment still has to close")
    return readme[start : readme.index("\n## ", start)]


@pytest.mark.parametrize(
    ("what", "mitigation"),
    [
        ("Uploads nobody uses", "limit_req"),
        ("clear_cache", "under the budget"),
        ("checkip.amazonaws.com", "$http_origin"),
        ("/_stcore/metrics", "deny all"),
        ("main_script_path", "deploy from a path"),
        ("Forged widget values", "checked by the app"),
    ],
)
def test_what_configuration_cannot_close_is_documented_with_its_mitigation(what, mitigation):
    section = _hosting_section()
    assert what in section and mitigation in section, (
        f"README's hosting section must say what {what!r} exposes and how to close it"
    )


def test_the_upload_reproduction_is_in_the_repository():
    assert (ROOT / "scripts" / "upload_flood.py").is_file(), "the reproduction to report upstream"


def test_streamlit_still_looks_up_the_external_ip_for_a_foreign_origin(monkeypatch):
    """Pins what the README documents: when Streamlit stops the lookup, update the README."""
    from streamlit import net_util
    from streamlit.web.server.starlette import starlette_websocket

    calls = []
    monkeypatch.setattr(net_util, "get_external_ip", lambda: calls.append(1))
    allowed = starlette_websocket._is_origin_allowed("https://evil.example", "127.0.0.1:8501")
    assert not allowed, "a foreign Origin must be refused"
    assert calls, "Streamlit no longer looks up the external IP: drop the README's note"
