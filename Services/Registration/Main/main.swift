import ServiceKit
import RegistrationService

await ServiceMain.run(descriptor: RegistrationService.descriptor) { reader, settings, logger in
    try RegistrationService.buildApplication(reader: reader, settings: settings, logger: logger)
}
