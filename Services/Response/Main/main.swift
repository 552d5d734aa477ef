import ServiceKit
import ResponseService

await ServiceMain.run(descriptor: ResponseService.descriptor) { reader, settings, logger in
    try ResponseService.buildApplication(reader: reader, settings: settings, logger: logger)
}
