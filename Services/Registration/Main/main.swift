import ServiceKit
import RegistrationService

await ServiceMain.run(descriptor: RegistrationService.descriptor, build: RegistrationService.buildApplication(reader:settings:logger:))
