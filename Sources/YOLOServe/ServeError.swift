import Hummingbird

/// An answer other than success: a status and a one-line message, sent as `{"error": "..."}`.
package struct ServeError: Error {
    package var status: HTTPResponse.Status
    package var message: String
    package var headers: HTTPFields = [:]

    package init(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }
}

extension ServeError {
    /// The same answer with `Connection: close`: for an answer given before the request's body was read,
    /// whose connection then ends (`ConnectionGuard`) rather than reading a body nobody will use.
    func closingConnection() -> ServeError {
        var error = self
        error.headers[.connection] = "close"
        return error
    }
}
