import RegistrationService
import ServiceKitHTTP

await RegistrationService.main()
