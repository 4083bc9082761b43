import Hummingbird
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// The request context of `yolo serve`: Hummingbird's basics plus the request's connection, through which
/// the service sends an interim `100 Continue` (`Connection.sendContinue`).
package struct ServeRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    let channel: any Channel

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

enum Connection {
    /// Writes `100 Continue` ahead of the final answer (RFC 9110 §10.1.1), for a client that sent
    /// `Expect: 100-continue` and waits for it before sending the body.
    static func sendContinue(on channel: any Channel) async {
        try? await channel.writeAndFlush(HTTPResponsePart.head(HTTPResponse(status: .continue)))
    }
}

/// What `yolo serve` adds to each HTTP/1 connection, between the HTTP codec and Hummingbird:
///
/// - It ends a connection whose answer says `Connection: close`, which the service sends when it answers
///   before reading the whole body (a limit, a timeout, a bad header): Hummingbird would otherwise read the
///   rest of that body, however long it is and however slowly it comes, to reach the next request. Once
///   such an answer is written, the connection is closed when the request's end arrives or `linger` later,
///   whichever comes first: a client still sending gets a little time to read the answer before the close
///   (closing at once with unread bytes makes the kernel reset the connection, and the client may lose it).
/// - It answers a request that the HTTP parser rejects from its head (a bad request line or header, headers
///   over Hummingbird's 80 KB, both `Content-Length` and `Transfer-Encoding`) with a one-line JSON error like
///   every other, 400 (431 for headers too large), and closes the connection; Hummingbird's own answer
///   there is an empty 400.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let linger: TimeAmount
    /// A request head has arrived and its end not yet.
    private var reading = false
    /// A request head has arrived and its answer's end has not been written yet.
    private var answering = false
    /// The answer being written says `Connection: close`.
    private var closing = false
    /// That answer has been written.
    private var answered = false

    init(linger: TimeAmount) {
        self.linger = linger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            reading = true
            answering = true
        case .body: break
        case .end:
            reading = false
            if answered { context.close(promise: nil) }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response) where response.status.kind != .informational:
            closing = response.headerFields[.connection]?.lowercased() == "close"
            context.write(data, promise: promise)
        case .end:
            answering = false
            guard closing else { return context.write(data, promise: promise) }
            let written = promise ?? context.eventLoop.makePromise()
            context.writeAndFlush(data, promise: written)
            written.futureResult.assumeIsolated().whenComplete { _ in self.wasAnswered(context: context) }
        default:
            context.write(data, promise: promise)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError, !answering else { return context.fireErrorCaught(error) }
        let tooLarge = error == .headerOverflow
        let message = tooLarge ? "the request's headers are too large" : "malformed HTTP request (\(error))"
        let body = ByteBuffer(string: "{\"error\": \"\(message)\"}\n")
        let head = HTTPResponse(status: tooLarge ? .requestHeaderFieldsTooLarge : .badRequest,
                                headerFields: [.contentType: "application/json", .contentLength: String(body.readableBytes),
                                               .connection: "close"])
        answering = true
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    private func wasAnswered(context: ChannelHandlerContext) {
        answered = true
        guard reading else {
            context.close(promise: nil)
            return
        }
        context.eventLoop.assumeIsolated().scheduleTask(in: linger) {
            context.close(promise: nil)
        }
    }
}
