import ConsoleService
import Foundation
import RegistrationService
import ResponseService
import ServiceKitHTTP
import StudyMetadataService

// One executable for the container image, so that the four services share one statically linked
// copy of the Swift runtime, Foundation and ICU instead of carrying one each. It runs the service
// it is called as: the image links `study-metadata`, `registration`, `response` and `console` to
// it, so a container's command stays the service's name. Flags after the name are the service's
// own (`response --http-port 8082`).
let called = URL(fileURLWithPath: CommandLine.arguments.first ?? "").lastPathComponent
switch called {
case "study-metadata": await StudyMetadataService.main()
case "registration": await RegistrationService.main()
case "response": await ResponseService.main()
case "console": await ConsoleService.main()
default:
    FileHandle.standardError.write(Data("""
        studystack: called as "\(called)"; run it through one of its links: \
        study-metadata, registration, response or console

        """.utf8))
    exit(64)  // EX_USAGE
}
