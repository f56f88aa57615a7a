// An offline grading model for promptfoo's model-graded assertions: it answers each grading prompt the way
// promptfoo's parser for that assertion expects, from word overlap, so the grades are deterministic.
// With `config.raise` its client raises instead (a grading endpoint that drops the connection).
const words = (text) => String(text).toLowerCase().match(/[a-z0-9,.]*[a-z0-9]/g) || [];
const covered = (text, source) => {
  const known = new Set(words(source));
  return words(text).every((word) => known.has(word));
};
const lines = (text) => String(text).split('\n').map((line) => line.trim()).filter(Boolean);

const GRADERS = {
  // the answer's statements, one per line
  'context-faithfulness-longform': (vars) => lines(vars.answer).join('\n'),
  // a statement is supported when the context holds every word of it
  'context-faithfulness-nli': (vars) =>
    'Final verdict for each statement in order: ' +
    vars.statements.map((statement) => (covered(statement, vars.context) ? 'Yes.' : 'No.')).join(' '),
  // a sentence of the reference is attributed when the context holds every word of it
  'context-recall': (vars) =>
    String(vars.groundTruth)
      .split(/(?<=\.)\s+/)
      .map((sentence, index) => `${index + 1}. ${sentence} ${covered(sentence, vars.context) ? '[Attributed]' : '[Not Attributed]'}`)
      .join('\n'),
  // the question the answer answers: its last line
  'answer-relevance': (vars) => lines(vars.answer).at(-1),
  // B (a superset of the reference) when the answer holds every word of the reference, else D (disagrees)
  factuality: (vars) =>
    JSON.stringify(
      covered(vars.ideal, vars.completion)
        ? { category: 'B', reason: 'The answer holds every word of the reference.' }
        : { category: 'D', reason: 'The answer lacks words of the reference.' },
    ),
};

class OfflineGrader {
  constructor(options = {}) {
    this.config = options.config || {};
  }

  id() {
    return 'offline-grader';
  }

  async callApi(prompt, context) {
    if (this.config.raise) {
      throw new Error(this.config.raise);
    }
    const grade = GRADERS[context.prompt.label];
    if (!grade) {
      return { error: `grader.js does not grade ${context.prompt.label}` };
    }
    return { output: grade(context.vars) };
  }

  // a bag of words hashed into 64 dimensions
  async callEmbeddingApi(text) {
    const embedding = new Array(64).fill(0);
    for (const word of words(text)) {
      let hash = 0;
      for (const char of word) {
        hash = (hash * 31 + char.charCodeAt(0)) % 64;
      }
      embedding[hash] += 1;
    }
    return { embedding };
  }
}

module.exports = OfflineGrader;
