// Study documents, activities and wire replies are built of JSON values, so whoever uses
// StudyModels uses `JSONValue` too.
@_exported import JSONText
