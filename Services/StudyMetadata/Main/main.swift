import ServiceKit
import StudyMetadataService

await ServiceMain.run(descriptor: StudyMetadataService.descriptor, build: StudyMetadataService.buildApplication(reader:settings:logger:))
