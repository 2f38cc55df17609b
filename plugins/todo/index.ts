import { KernelError, SESSION_TODOS, definePlugin, type TodoItem } from '../../core/index.js';

/** The agent's task list for its session: replaced whole on every write, so it is never half updated. */
export default definePlugin({
  activate(ctx) {
    const todos = ctx.get(SESSION_TODOS);
    return {
      todo: {
        write: async (input, call) => {
          const sessionId = call.principal.sessionId;
          if (call.principal.kind !== 'agent' || sessionId === undefined) {
            throw new KernelError('INVALID_INPUT', 'todo_write keeps the task list of an agent session; it is called by the agent inside a turn');
          }
          const items = (input as { todos: TodoItem[] }).todos;
          await todos.write(sessionId, items);
          const count = (status: TodoItem['status']) => items.filter((item) => item.status === status).length;
          return { todos: items, pending: count('pending'), inProgress: count('in_progress'), completed: count('completed'), cancelled: count('cancelled') };
        },
      },
    };
  },
});
