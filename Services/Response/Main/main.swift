import ServiceKit
import ResponseService

await ServiceMain.run(descriptor: ResponseService.descriptor, build: ResponseService.buildApplication(reader:settings:logger:))
