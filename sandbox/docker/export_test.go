package docker

// ProjectHash is projectHash, for tests that clean up a project's volumes.
var ProjectHash = projectHash
