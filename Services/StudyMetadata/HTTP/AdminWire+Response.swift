import Hummingbird
import ServiceKit
import StudyModels

// The admin API's reply types are shared with the console (StudyModels' AdminWire); here they
// become route results.
extension AdminSignedIn: ResponseEncodable {}
extension AdminProfile: ResponseEncodable {}
extension StudyList: ResponseEncodable {}
extension DraftSaved: ResponseEncodable {}
extension AppList: ResponseEncodable {}
extension StudySummary: ResponseEncodable {}
extension StudyVersionList: ResponseEncodable {}
extension StorageCheckReply: ResponseEncodable {}
extension StudyActionResult: ResponseEncodable {}
extension AdminAccountList: ResponseEncodable {}
extension AdminInvited: ResponseEncodable {}
extension StudyTeam: ResponseEncodable {}
extension AuditLog.EventList: ResponseEncodable {}
extension AppCreated: ResponseEncodable {}
extension TestingCredentials: ResponseEncodable {}
extension StudyChecklistState: ResponseEncodable {}
