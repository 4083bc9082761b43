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
