import ResponseService
import ServiceKitHTTP

await ResponseService.main()
