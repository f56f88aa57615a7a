// A model endpoint that is down: promptfoo records the error it returns on the result.
class UnavailableModel {
  id() {
    return 'unavailable-model';
  }

  async callApi() {
    return { error: 'the model endpoint refused the request (HTTP 503 Service Unavailable)' };
  }
}

module.exports = UnavailableModel;
