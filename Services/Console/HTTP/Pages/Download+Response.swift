import ConsoleCore
import Hummingbird
import NIOCore

extension AdminAPIClient.Download {
    /// The file as the console's answer, passed on chunk by chunk as the service sends it (the
    /// console's security headers are added to every answer), never kept by the browser's cache.
    var response: Response {
        var headers: HTTPFields = [.contentType: contentType, .cacheControl: "no-store"]
        headers[.contentDisposition] = contentDisposition
        let body = self.body
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                for try await chunk in body { try await writer.write(chunk) }
                try await writer.finish(nil)
            })
    }
}
