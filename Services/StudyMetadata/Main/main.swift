import ServiceKit
import StudyMetadataService

await ServiceMain.run(descriptor: StudyMetadataService.descriptor) { reader, settings, logger in
    try StudyMetadataService.buildApplication(reader: reader, settings: settings, logger: logger)
}
