import ServiceKitHTTP
import StudyMetadataService

await StudyMetadataService.main()
