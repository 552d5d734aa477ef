import HTTPTypes

/// Header names the services read on every request of an API, made once: making a name checks
/// and lower-cases its text.
extension HTTPField.Name {
    /// The MyStudies apps' headers naming their app, organisation and language.
    public static let applicationId = HTTPField.Name("applicationId")!
    public static let orgId = HTTPField.Name("orgId")!
    public static let language = HTTPField.Name("language")!
    /// A LabKey client's API key.
    public static let apiKey = HTTPField.Name("apikey")!
}
