"""The Python side of the RSocket interoperability tests (rs-impl/tests/rsocket_interop.rs).

rsocket 0.4.20 from PyPI (rsocket-py, an implementation nobody in this project wrote), in a
virtual environment made by scripts/rsocket-py.sh.

    python rsocket_interop.py server          # prints "PORT <n>", serves until stdin closes
    python rsocket_interop.py client <port>   # runs the client checks, prints one JSON line
    python rsocket_interop.py bench <port> <clients> <in_flight> <round_trips>
                                              # request_response ping-pong, prints msgs/s

Server routes: "echo" (request_response), "fail" (an application error), "stream" (an
endless generator counting what it produced and whether it was cancelled), "channel" (echoes
the requester's payloads after the first), "log" (fire-and-forget), "stats" (a JSON report
of all that).
"""

import asyncio
import json
import sys
import time

from reactivestreams.subscriber import Subscriber
from reactivestreams.publisher import Publisher
from reactivestreams.subscription import Subscription
from rsocket.extensions.helpers import composite, route
from rsocket.extensions.mimetypes import WellKnownMimeTypes
from rsocket.frame_helpers import ensure_bytes
from rsocket.helpers import create_future, single_transport_provider
from rsocket.payload import Payload
from rsocket.routing.request_router import RequestRouter
from rsocket.routing.routing_request_handler import RoutingRequestHandler
from rsocket.rsocket_client import RSocketClient
from rsocket.rsocket_server import RSocketServer
from rsocket.streams.stream_from_generator import StreamFromGenerator
from rsocket.transports.tcp import TransportTCP

STATS = {"produced": 0, "cancelled": False, "fnf": [], "channel_in": []}


def make_router():
    router = RequestRouter()

    @router.response("echo")
    async def echo(payload: Payload):
        return create_future(Payload(payload.data, b"echo-meta"))

    @router.response("ping")
    async def ping(payload: Payload):
        return create_future(Payload(payload.data))

    @router.response("stats")
    async def stats(payload: Payload):
        return create_future(Payload(json.dumps(STATS).encode()))

    @router.response("fail")
    async def fail(payload: Payload):
        raise Exception("python says no")

    @router.fire_and_forget("log")
    async def log(payload: Payload):
        STATS["fnf"].append(payload.data.decode())

    @router.stream("stream")
    async def stream():
        STATS["produced"] = 0
        STATS["cancelled"] = False

        def gen():
            i = 0
            while True:
                STATS["produced"] += 1
                yield Payload(str(i).encode()), False
                i += 1

        def on_cancel():
            STATS["cancelled"] = True

        return StreamFromGenerator(gen, on_cancel=on_cancel)

    @router.channel("channel")
    async def channel(payload: Payload):
        STATS["channel_in"] = [payload.data.decode()]
        out = EchoProcessor()
        return out, out

    return router


class EchoProcessor(Publisher, Subscriber, Subscription):
    """Answers each inbound payload with "echo:<data>"; completes when the inbound does.
    Requests the inbound one at a time, as its own subscriber requests."""

    def __init__(self):
        self.downstream = None
        self.upstream = None
        self.demand = 0

    # Publisher
    def subscribe(self, subscriber):
        self.downstream = subscriber
        subscriber.on_subscribe(self)

    # Subscription (from downstream)
    def request(self, n):
        self.demand += n
        if self.upstream is not None:
            self.upstream.request(n)

    def cancel(self):
        if self.upstream is not None:
            self.upstream.cancel()

    # Subscriber (inbound)
    def on_subscribe(self, subscription):
        self.upstream = subscription
        if self.demand > 0:
            subscription.request(self.demand)

    def on_next(self, value, is_complete=False):
        STATS["channel_in"].append(value.data.decode())
        self.downstream.on_next(Payload(b"echo:" + value.data), is_complete)

    def on_error(self, exception):
        self.downstream.on_error(exception)

    def on_complete(self):
        self.downstream.on_complete()


async def serve():
    router = make_router()

    def session(*connection):
        RSocketServer(TransportTCP(*connection),
                      handler_factory=lambda: RoutingRequestHandler(router),
                      fragment_size_bytes=1024)

    server = await asyncio.start_server(session, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    loop = asyncio.get_running_loop()
    # Serve until the test closes our stdin.
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


def meta(path):
    return composite(route(path))


class Manual(Subscriber):
    """A subscriber whose requests the client check makes by hand."""

    def __init__(self):
        self.values = []
        self.done = asyncio.Event()
        self.error = None
        self.subscription = None
        self.arrived = asyncio.Event()

    def on_subscribe(self, subscription):
        self.subscription = subscription

    def on_next(self, value, is_complete=False):
        self.values.append(value.data.decode())
        self.arrived.set()
        if is_complete:
            self.done.set()

    def on_error(self, exception):
        self.error = str(exception)
        self.done.set()

    def on_complete(self):
        self.done.set()

    async def wait_for(self, count):
        while len(self.values) < count:
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 20)


async def client(port):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    out = {}
    async with RSocketClient(single_transport_provider(TransportTCP(reader, writer)),
                             metadata_encoding=WellKnownMimeTypes.MESSAGE_RSOCKET_COMPOSITE_METADATA,
                             fragment_size_bytes=1024) as c:
        r = await c.request_response(Payload(b"hello", meta("echo")))
        out["echo"] = r.data.decode()
        big = bytes(i % 251 for i in range(100_000))
        r = await c.request_response(Payload(big, meta("echo")))
        out["big_ok"] = r.data == big
        await c.fire_and_forget(Payload(b"fnf-1", meta("log")))

        # REQUEST_N honoured exactly: request 5, then 3, then cancel.
        m = Manual()
        c.request_stream(Payload(b"", meta("count"))).initial_request_n(5).subscribe(m)
        await m.wait_for(5)
        await asyncio.sleep(0.2)
        out["after_5"] = len(m.values)
        m.subscription.request(3)
        await m.wait_for(8)
        await asyncio.sleep(0.2)
        out["after_8"] = len(m.values)
        m.subscription.cancel()

        # limit_rate: re-requests in batches of 7 until the finite stream completes.
        from rsocket.awaitable.collector_subscriber import CollectorSubscriber
        col = CollectorSubscriber(limit_rate=7)
        c.request_stream(Payload(b"50", meta("finite"))).initial_request_n(7).subscribe(col)
        values = await asyncio.wait_for(col.run(), 20)
        out["limit_rate_values"] = [v.data.decode() for v in values]

        # A channel: three payloads after the first.
        class Three(Publisher, Subscription):
            def subscribe(self, s):
                self.s = s
                self.i = 0
                s.on_subscribe(self)

            def request(self, n):
                for _ in range(n):
                    if self.i < 3:
                        self.s.on_next(Payload(f"c{self.i}".encode()))
                        self.i += 1
                if self.i == 3:
                    self.i += 1
                    self.s.on_complete()

            def cancel(self):
                pass

        ch = CollectorSubscriber(limit_rate=10)
        c.request_channel(Payload(b"first", meta("channel")), Three()).initial_request_n(10).subscribe(ch)
        values = await asyncio.wait_for(ch.run(), 20)
        out["channel"] = [v.data.decode() for v in values]

        try:
            await c.request_response(Payload(b"x", meta("fail")))
            out["fail"] = "no error"
        except Exception as e:
            out["fail"] = str(e)
    print(json.dumps(out), flush=True)


async def bench(port, clients, in_flight, round_trips):
    async def one():
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        async with RSocketClient(single_transport_provider(TransportTCP(reader, writer)),
                                 metadata_encoding=WellKnownMimeTypes.MESSAGE_RSOCKET_COMPOSITE_METADATA) as c:
            m = meta("ping")

            async def worker(count):
                for _ in range(count):
                    await c.request_response(Payload(b"ping", m))

            per = round_trips // in_flight
            await asyncio.gather(*(worker(per) for _ in range(in_flight)))

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(clients)))
    elapsed = time.perf_counter() - start
    total = clients * (round_trips // in_flight) * in_flight
    print(json.dumps({"messages": total, "seconds": elapsed, "msgs_per_s": total / elapsed}), flush=True)


def main():
    mode = sys.argv[1]
    if mode == "server":
        asyncio.run(serve())
    elif mode == "client":
        asyncio.run(client(int(sys.argv[2])))
    elif mode == "bench":
        asyncio.run(bench(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
