"""Search: a Claim of what a backend answered, with every hit a record of its own."""

from __future__ import annotations

import asyncio
import inspect
import json
from datetime import timedelta
from typing import Any

import addressable as ad

from .._base import Adapter, schema
from .._urls import normalize_url, redact_url
from .hits import Hit, SearchBackend

HIT_TOOL = "search_hit"
DEFAULT_LIMIT = 10
MAX_LIMIT = 100  # the most hits one search may ask for
# Characters a query may have: a search engine's own limit is near this, and a local
# index's time grows with the words of a query.
MAX_QUERY = 2000
DEFAULT_REUSE = timedelta(hours=1)  # an identical query this recent is served from the store


class Search(Adapter):
    """Runs queries against a backend and records each answer as a nondeterministic
    result (a live index gives another answer tomorrow: `verify=True` is refused).

    Every hit is also recorded on its own, keyed by its normalised URL and naming the
    search that found it (`meta.found_by`), so that a later fetch of that URL, which
    has the same key, is linked to the search. An empty answer is a result too: the
    negative finding is kept.
    """

    name = "search"
    description = (
        "Search for documents matching a query; returns ranked hits with titles, URLs and snippets."
    )
    input_schema = schema(
        {
            "query": {"type": "string", "maxLength": MAX_QUERY},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "description": f"at most this many hits, {DEFAULT_LIMIT} by default",
            },
            "fresh": {
                "type": "boolean",
                "description": "run it again even if the same search ran a moment ago",
            },
        },
        ["query"],
    )

    def __init__(
        self,
        kit: ad.Toolkit,
        backend: SearchBackend | None = None,
        *,
        limit: int = DEFAULT_LIMIT,
        reuse_within: timedelta | None = DEFAULT_REUSE,
        name: str | None = None,
    ) -> None:
        super().__init__(kit, name)
        if backend is None:  # the embedded default: an empty local index to add to
            from .index import LocalIndex

            backend = LocalIndex()
        self.backend: SearchBackend = backend
        self.limit = _checked_limit(limit, "Search: limit")
        self.reuse_within = reuse_within

    def __call__(self, query: str, *, limit: int | None = None, fresh: bool = False) -> ad.Result:
        """Run `query`; the same query to the same backend, run in this session within
        `reuse_within`, gives back its stored result (`replayed` set) unless `fresh`.
        `limit`, when given, is an int from 1 to `MAX_LIMIT` (else `ArgumentError`)."""
        args = self._args(query, limit)
        earlier = self._earlier(args, fresh)
        if earlier is not None:
            return earlier
        try:
            hits = self.backend.search(query, args["limit"])
        except Exception as exc:
            self._failed(args, exc)
            raise
        return self._record(args, hits)

    async def acall(
        self, query: str, *, limit: int | None = None, fresh: bool = False
    ) -> ad.Result:
        """The async twin of calling the adapter: a backend's `asearch` is awaited (a
        remote backend's async client); one without it runs in a thread."""
        args = self._args(query, limit)
        earlier = self._earlier(args, fresh)
        if earlier is not None:
            return earlier
        asearch = getattr(self.backend, "asearch", None)
        try:
            if asearch is not None and inspect.iscoroutinefunction(asearch):
                hits: list[Hit] = await asearch(query, args["limit"])
            else:
                hits = await asyncio.to_thread(self.backend.search, query, args["limit"])
        except Exception as exc:
            self._failed(args, exc)
            raise
        return self._record(args, hits)

    def handle(self, arguments: dict[str, Any]) -> str:
        fresh = bool(arguments.get("fresh", False))
        return self._shown(self(arguments["query"], limit=arguments.get("limit"), fresh=fresh))

    async def ahandle(self, arguments: dict[str, Any]) -> str:
        """A model's call from async code (`kit.ahandle`), through `acall`."""
        fresh = bool(arguments.get("fresh", False))
        result = await self.acall(arguments["query"], limit=arguments.get("limit"), fresh=fresh)
        return self._shown(result)

    # -- the bookkeeping both paths share ------------------------------------------------

    def _args(self, query: str, limit: int | None) -> dict[str, Any]:
        if not isinstance(query, str) or len(query) > MAX_QUERY:
            raise ad.ArgumentError(
                f"{self.name}: a query is a string of at most {MAX_QUERY:,} characters"
            )
        chosen = self.limit if limit is None else _checked_limit(limit, f"{self.name}: limit")
        return {"query": query, "backend": self.backend.name, "limit": chosen}

    def _earlier(self, args: dict[str, Any], fresh: bool) -> ad.Result | None:
        if fresh or self.reuse_within is None:
            return None
        return self._recent(args)

    def _failed(self, args: dict[str, Any], exc: Exception) -> None:
        self.kit.record_failure(
            self.name,
            args,
            exc,
            determinism="nondeterministic",
            meta={
                "query": args["query"],
                "backend": self.backend.name,
                ad.Report.QUERY: f"{args['query']} ({self.backend.name})",
            },
        )

    def _record(self, args: dict[str, Any], hits: list[Hit]) -> ad.Result:
        query = str(args["query"])
        payload = {
            "query": query,
            "backend": self.backend.name,
            "hits": [h.model_dump(exclude_none=True) for h in hits],
        }
        result = self.kit.record(
            self.name,
            args,
            ad.ids.canonical_json(payload),
            determinism="nondeterministic",
            media_type="application/json",
            meta={
                "query": query,
                "backend": self.backend.name,
                "hits": len(hits),
                ad.Report.QUERY: f"{query} ({self.backend.name})",
            },
        )
        for rank, hit in enumerate(hits, start=1):
            self.kit.record(
                HIT_TOOL,
                {"query": query, "backend": self.backend.name, "rank": rank},
                ad.ids.canonical_json(hit.model_dump(exclude_none=True)),
                determinism="nondeterministic",
                key=normalize_url(redact_url(hit.url)),  # the key a fetch of it gets
                media_type="application/json",
                meta={"found_by": result.id, "rank": rank},
            )
        return result

    def _shown(self, result: ad.Result) -> str:
        if not result.replayed:
            return self.render(result)
        when = self.kit.store.last_seen(result.record).strftime("%H:%M")
        return (
            f"[the same search ran at {when}: its stored results follow; ask with "
            f"fresh=true to run it again]\n{self.render(result)}"
        )

    def _recent(self, args: dict[str, Any]) -> ad.Result | None:
        now = self.kit.clock()
        for record in reversed(
            list(self.kit.store.records(tool=self.name, session=self.kit.session))
        ):
            if record.args != args or record.status is not ad.Status.OK:
                continue
            seen = [
                o.at
                for o in self.kit.store.observations(record.id)
                if o.session == self.kit.session
            ]
            if seen and self.reuse_within is not None and now - max(seen) <= self.reuse_within:
                payload = self.kit.store.read(record)
                return ad.Result(record=record, payload=payload, replayed=True)
        return None

    def render(self, result: ad.Result) -> str:
        """The hits as the model sees them, each with the id of its own record."""
        data = json.loads(result.payload)
        if not data["hits"]:
            return f"No results for {data['query']!r} ({data['backend']})."
        ids = {h.record.meta.get("rank"): h.id for h in self.hits(result.id)}
        lines = [f"Results for {data['query']!r} ({data['backend']}):"]
        for rank, hit in enumerate(data["hits"], start=1):
            lines.append(f"{rank}. {hit['title']} - {hit['url']} [{ids.get(rank, '?')}]")
            if hit.get("snippet"):
                lines.append(f"   {hit['snippet']}")
        return "\n".join(lines)

    def hits(self, search_id: str) -> list[ad.Result]:
        """The hit records a search made, best first."""
        found = [
            r
            for r in self.kit.store.records(tool=HIT_TOOL, refers_to=search_id)
            if r.meta.get("found_by") == search_id
        ]
        found.sort(key=lambda r: int(str(r.meta.get("rank", 0))))
        return [ad.Result(record=r, payload=self.kit.store.read(r)) for r in found]

    def queries(self, session: str | None = None) -> list[tuple[str, str]]:
        """(query, backend) of every search run, oldest first, in one session or all; a
        query run twice with the same answer counts twice."""
        runs = []
        for record in self.kit.store.records(tool=self.name, session=session):
            for seen in self.kit.store.observations(record.id):
                if session is None or seen.session == session:
                    runs.append((seen.at, str(record.args["query"]), str(record.args["backend"])))
        return [(query, backend) for _, query, backend in sorted(runs)]


def _checked_limit(limit: object, where: str) -> int:
    """`limit` if it is an int from 1 to `MAX_LIMIT` (not a bool); else `ArgumentError`,
    before any backend is asked (SQLite reads -1 as no limit at all)."""
    wanted = f"{where} must be an integer from 1 to {MAX_LIMIT}"
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise ad.ArgumentError(f"{wanted}, not a {type(limit).__name__}")
    if not 1 <= limit <= MAX_LIMIT:
        raise ad.ArgumentError(wanted)
    return limit
